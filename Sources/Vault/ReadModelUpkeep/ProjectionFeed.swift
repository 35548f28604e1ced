import HealthModel
import Projections
import VaultEvents

/// Maps vault events to the read models' inputs: cumulative and discrete quantity samples, stand
/// hours, Apple's ring summaries, goals and the source order. Other events teach the read models
/// nothing (yet) and map to nil.
struct ProjectionFeed {
    private var sourceKeys: [HealthSource: SourceKey] = [:]
    private var styles: [String: AggregationStyle] = [:]

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
        if let known = sourceKeys[source] { return known }
        let key = SourceKey(name: source.name, deviceClass: DeviceClass(model: source.device?.model))
        sourceKeys[source] = key
        return key
    }

    private mutating func style(of type: String) -> AggregationStyle {
        if let known = styles[type] { return known }
        let style = AggregationStyle.of(type: type)
        styles[type] = style
        return style
    }
}
