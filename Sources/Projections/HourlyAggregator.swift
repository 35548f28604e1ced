import HealthModel

/// Per local hour figures of samples, with the same rules as the daily read models: cumulative
/// metrics split at local hour boundaries pro rata and deduplicated across sources by rank,
/// discrete metrics averaged with min and max; an app's rewritten copies count once
/// (`RewrittenCopies`). Used for hourly exports; days come from the read models themselves.
public struct HourlyAggregator {
    /// One metric's figure for one local hour.
    public struct Row: Equatable, Sendable {
        public var metric: String
        public var unit: String
        /// `YYYY-MM-DDTHH` in the samples' own offset.
        public var period: String
        /// Sum (cumulative) or average (discrete).
        public var value: Double
        public var min: Double?
        public var max: Double?
        public var samples: Int
    }

    private struct Key: Hashable {
        var metric: String
        var unit: String
        /// Local hours since 1970.
        var hour: Int64
    }

    private let rank: (SourceKey) -> Int
    private var sourceIDs: [SourceKey: Int32] = [:]
    private var sourceRanks: [Int] = []
    private var intervals: [Key: [Interval]] = [:]
    private var counts: [Key: Int] = [:]
    private var discrete: [Key: DiscreteStats] = [:]

    /// `rank` orders sources as the read models do (lower counts first).
    public init(rank: @escaping (SourceKey) -> Int) {
        self.rank = rank
    }

    public mutating func add(_ input: ProjectionInput) {
        switch input {
        case .cumulative(let s):
            let source = id(of: s.source)
            let offset = Int64(s.utcOffset)
            let firstHour = LocalDay.floorDivide(s.start + offset, 3600)
            guard s.end > s.start else {
                let key = Key(metric: s.metric, unit: s.unit, hour: firstHour)
                intervals[key, default: []].append(Interval(start: s.start, end: s.start, value: s.value, source: source, metadataDigest: s.metadataDigest,
                                                            creation: Interval.creation(s.created, partEnd: s.start)))
                counts[key, default: 0] += 1
                return
            }
            let duration = Double(s.end - s.start)
            let whole = s.end <= (firstHour + 1) * 3600 - offset
            let digest = RewrittenCopies.digest(metadata: s.metadataDigest, sampleStart: s.start, sampleEnd: s.end, whole: whole)
            var cursor = s.start
            var hour = firstHour
            while cursor < s.end {
                let boundary = min(s.end, (hour + 1) * 3600 - offset)
                let key = Key(metric: s.metric, unit: s.unit, hour: hour)
                intervals[key, default: []].append(Interval(start: cursor, end: boundary,
                                                            value: s.value * Double(boundary - cursor) / duration, source: source,
                                                            metadataDigest: digest, creation: Interval.creation(s.created, partEnd: boundary)))
                if cursor == s.start { counts[key, default: 0] += 1 }
                cursor = boundary
                hour += 1
            }
        case .annotated(let inner, _):
            add(inner)
        case .discrete(let s):
            let key = Key(metric: s.metric, unit: s.unit, hour: LocalDay.floorDivide(s.start + Int64(s.utcOffset), 3600))
            discrete[key, default: DiscreteStats()].add(s)
        default:
            break
        }
    }

    /// Every hour's figures, by metric, unit and hour.
    public func rows() -> [Row] {
        var result: [Row] = []
        for (key, list) in intervals {
            let sorted = list.sorted(by: Interval.precedes)
            let total = Deduplication.total(sorted) { sourceRanks[Int($0)] }
            result.append(Row(metric: key.metric, unit: key.unit, period: Self.period(key.hour), value: total,
                              min: nil, max: nil, samples: counts[key] ?? 0))
        }
        for (key, stats) in discrete {
            result.append(Row(metric: key.metric, unit: key.unit, period: Self.period(key.hour),
                              value: stats.average, min: stats.min, max: stats.max, samples: Int(stats.samples)))
        }
        return result.sorted { ($0.metric, $0.unit, $0.period) < ($1.metric, $1.unit, $1.period) }
    }

    private mutating func id(of source: SourceKey) -> Int32 {
        if let known = sourceIDs[source] { return known }
        let id = Int32(sourceRanks.count)
        sourceIDs[source] = id
        sourceRanks.append(rank(source))
        return id
    }

    static func period(_ localHour: Int64) -> String {
        let day = LocalDay(dayNumber: LocalDay.floorDivide(localHour, 24))
        let hour = localHour - day.dayNumber * 24
        return "\(day)T\(hour < 10 ? "0" : "")\(hour)"
    }
}
