import HealthModel
import Projections
import VaultEvents

/// Maps vault events to the read models' inputs: cumulative and discrete quantity samples, stand
/// hours, Apple's ring summaries, goals and the source order. Other events teach the read models
/// nothing (yet) and map to nil.
struct ProjectionFeed {
    private var sourceKeys: [HealthSource: SourceKey] = [:]
    private var styles: [String: AggregationStyle] = [:]
    /// A frame holds one category's month, a few types and sources interleaved: the last ones
    /// are compared before any hashing.
    private var recentSources: [(source: HealthSource, key: SourceKey)] = []
    private var recentStyles: [(type: String, style: AggregationStyle)] = []

    static let standHour = ProjectionInput.standHourType
    static let stood = "HKCategoryValueAppleStandHourStood"

    mutating func input(for event: VaultEvent) -> ProjectionInput? {
        switch event {
        case .sample(let s):
            switch s.value {
            case .quantity(let value, let unit):
                guard value.double.isFinite else { return nil }
                if style(of: s.type) == .cumulative {
                    return .cumulative(CumulativeSample(
                        metric: s.type, unit: unit, source: sourceKey(s.source), start: s.start.seconds,
                        end: s.end.seconds, utcOffset: s.start.utcOffset, value: value.double))
                }
                return .discrete(DiscreteSample(metric: s.type, unit: unit, start: s.start.seconds,
                                                utcOffset: s.start.utcOffset, value: value.double))
            case .category(let value) where s.type == Self.standHour:
                return .standHour(start: s.start.seconds, utcOffset: s.start.utcOffset, stood: value == Self.stood)
            default:
                return nil
            }
        case .activitySummary(let a):
            return .appleRings(AppleRings(
                day: LocalDay(dayNumber: a.day), move: a.activeEnergy?.double, moveGoal: a.activeEnergyGoal?.double,
                exercise: a.exerciseTime?.double, exerciseGoal: a.exerciseTimeGoal?.double,
                stand: a.standHours?.double, standGoal: a.standHoursGoal?.double))
        case .goalSet(let goal):
            return .goalSet(ring: goal.ring, value: goal.value.double, from: goal.from)
        case .sourceOrderSet(_, let keys):
            return .sourceOrder(keys)
        case .erased(let record):
            return .erased(Self.erasedMonths(labels: record.labels))
        default:
            return nil
        }
    }

    /// The dated category-months among erased keys' labels (`heart/2024-03`); undated ones (the
    /// `Me` characteristics) fed no read model.
    static func erasedMonths(labels: [String]) -> [ErasedMonth] {
        labels.compactMap { text in
            guard let label = DataLabel(bytes: Array(text.utf8)), let month = label.month else { return nil }
            return ErasedMonth(category: label.category, month: month)
        }
    }

    /// The priority key of a source: its name, and its class from the device model.
    mutating func sourceKey(_ source: HealthSource) -> SourceKey {
        for recent in recentSources where recent.source == source { return recent.key }
        if let known = sourceKeys[source] {
            if recentSources.count == 8 { recentSources.removeLast() }
            recentSources.insert((source, known), at: 0)
            return known
        }
        let key = SourceKey(name: source.name, deviceClass: DeviceClass(model: source.device?.model))
        sourceKeys[source] = key
        return key
    }

    private mutating func style(of type: String) -> AggregationStyle {
        for recent in recentStyles where recent.type == type { return recent.style }
        if let known = styles[type] {
            if recentStyles.count == 8 { recentStyles.removeLast() }
            recentStyles.insert((type, known), at: 0)
            return known
        }
        let style = AggregationStyle.of(type: type)
        styles[type] = style
        return style
    }
}
