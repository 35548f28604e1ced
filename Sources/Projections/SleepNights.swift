import HealthModel

/// A stage of sleep as HealthKit records it (`HKCategoryValueSleepAnalysis…`).
public enum SleepStage: Int, Sendable, CaseIterable {
    case inBed = 0, asleepUnspecified = 1, awake = 2, core = 3, deep = 4, rem = 5

    /// The stage of a `SleepAnalysis` value (iOS 8's `Asleep` is unspecified); nil for others.
    public init?(value: String) {
        switch value {
        case "HKCategoryValueSleepAnalysisInBed": self = .inBed
        case "HKCategoryValueSleepAnalysisAsleep", "HKCategoryValueSleepAnalysisAsleepUnspecified": self = .asleepUnspecified
        case "HKCategoryValueSleepAnalysisAwake": self = .awake
        case "HKCategoryValueSleepAnalysisAsleepCore": self = .core
        case "HKCategoryValueSleepAnalysisAsleepDeep": self = .deep
        case "HKCategoryValueSleepAnalysisAsleepREM": self = .rem
        default: return nil
        }
    }

    public var isAsleep: Bool { self == .asleepUnspecified || self == .core || self == .deep || self == .rem }
}

/// One sleep-analysis sample: a span in one stage from one source.
public struct SleepSegment: Sendable, Equatable {
    public var start: HealthTimestamp
    public var end: HealthTimestamp
    public var stage: SleepStage
    public var source: SourceKey

    public init(start: HealthTimestamp, end: HealthTimestamp, stage: SleepStage, source: SourceKey) {
        self.start = start
        self.end = end
        self.stage = stage
        self.source = source
    }

    /// The night a segment belongs to: the local day it ends on, a segment ending at 18:00 or
    /// later counting toward the next day's night (an evening nap or going to bed early), so a
    /// night across midnight, or a DST switch, is one night.
    public var night: LocalDay {
        LocalDay(instant: end.seconds + Self.eveningShift, utcOffset: end.utcOffset)
    }

    static let eveningShift: Int64 = 6 * 3600
}

/// One night as `sleep` shows it: minutes per stage, sources deduplicated.
public struct SleepNight: Sendable, Equatable {
    public var night: LocalDay
    public var start: HealthTimestamp
    public var end: HealthTimestamp
    public var inBed: Double
    public var asleep: Double
    public var core: Double
    public var deep: Double
    public var rem: Double
    public var awake: Double
    /// The source most of the night's sleep came from.
    public var source: String
}

/// Figures of one night from its segments, as the Health app shows them.
///
/// In bed is the time any in-bed segment covers (overlaps counted once). Sleep stages are
/// deduplicated like steps: at each moment the best-ranked source with a stage segment counts
/// (the Watch over a phone app, or the person's order), and its stage there; a source's own
/// segments never hide each other (a moment two of them cover counts once, for the later-listed
/// stage by the stage order). Asleep is unspecified, core, deep and REM together.
enum SleepFigures {
    static func night(_ night: LocalDay, _ segments: [(segment: SleepSegment, source: Int32)], rank: (Int32) -> Int, names: (Int32) -> String) -> SleepNight {
        var minutes = [Double](repeating: 0, count: SleepStage.allCases.count)
        let beds = segments.filter { $0.segment.stage == .inBed }.map { ($0.segment.start.seconds, $0.segment.end.seconds) }
        minutes[SleepStage.inBed.rawValue] = Double(coveredSeconds(beds)) / 60
        let stages = segments.filter { $0.segment.stage != .inBed }
        var bySource: [Int32: Double] = [:]
        var cuts = Set<Int64>()
        for s in stages { cuts.insert(s.segment.start.seconds); cuts.insert(s.segment.end.seconds) }
        let points = cuts.sorted()
        for (a, b) in zip(points, points.dropFirst()) {
            var best: (rank: Int, stage: Int, source: Int32)?
            for s in stages where s.segment.start.seconds <= a && s.segment.end.seconds >= b {
                let candidate = (rank(s.source), s.segment.stage.rawValue, s.source)
                if best == nil || candidate.0 < best!.rank || (candidate.0 == best!.rank && candidate.1 > best!.stage) { best = candidate }
            }
            guard let best else { continue }
            let m = Double(b - a) / 60
            minutes[best.stage] += m
            if SleepStage(rawValue: best.stage)!.isAsleep { bySource[best.source, default: 0] += m }
        }
        let all = segments.map(\.segment)
        let start = all.min { $0.start.seconds < $1.start.seconds }!.start
        let end = all.max { $0.end.seconds < $1.end.seconds }!.end
        let main = bySource.max { $0.value != $1.value ? $0.value < $1.value : rank($0.key) > rank($1.key) }?.key ?? segments.min { rank($0.source) < rank($1.source) }!.source
        return SleepNight(
            night: night, start: start, end: end, inBed: minutes[SleepStage.inBed.rawValue],
            asleep: [SleepStage.asleepUnspecified, .core, .deep, .rem].map { minutes[$0.rawValue] }.reduce(0, +),
            core: minutes[SleepStage.core.rawValue], deep: minutes[SleepStage.deep.rawValue], rem: minutes[SleepStage.rem.rawValue],
            awake: minutes[SleepStage.awake.rawValue], source: names(main))
    }

    /// Seconds covered by at least one of the spans.
    static func coveredSeconds(_ spans: [(Int64, Int64)]) -> Int64 {
        var total: Int64 = 0
        var reach = Int64.min
        for (a, b) in spans.sorted(by: { $0.0 < $1.0 }) where b > max(a, reach) {
            total += b - max(a, reach)
            reach = b
        }
        return total
    }
}
