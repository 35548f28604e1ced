import Foundation
import HealthModel
@testable import Projections

/// Builders for read-model inputs, in local wall-clock terms.
enum Build {
    static let steps = "HKQuantityTypeIdentifierStepCount"
    static let heartRate = "HKQuantityTypeIdentifierHeartRate"
    static let watch = SourceKey(name: "Sam’s Apple Watch", deviceClass: .watch)
    static let phone = SourceKey(name: "Sam’s iPhone", deviceClass: .phone)

    /// Seconds since 1970 of a local wall-clock time in `offset` hours.
    static func instant(_ day: LocalDay, _ hour: Int, _ minute: Int = 0, offset: Int32 = 0) -> Int64 {
        day.startInstant(utcOffset: offset * 3600) + Int64(hour * 3600 + minute * 60)
    }

    /// Cumulative samples at `perMinute` over local [from, to) in `chunk`-minute pieces.
    static func spread(_ metric: String = steps, unit: String = "count", source: SourceKey, day: LocalDay,
                       from: (Int, Int), to: (Int, Int), chunk: Int, perMinute: Double, offset: Int32 = 0) -> [ProjectionInput] {
        var result: [ProjectionInput] = []
        var t = instant(day, from.0, from.1, offset: offset)
        let end = instant(day, to.0, to.1, offset: offset)
        while t < end {
            let next = min(t + Int64(chunk * 60), end)
            result.append(.cumulative(CumulativeSample(metric: metric, unit: unit, source: source, start: t, end: next,
                                                       utcOffset: offset * 3600, value: perMinute * Double(next - t) / 60)))
            t = next
        }
        return result
    }

    static func sample(_ metric: String = steps, source: SourceKey = phone, start: Int64, end: Int64, offset: Int32, value: Double) -> ProjectionInput {
        .cumulative(CumulativeSample(metric: metric, unit: "count", source: source, start: start, end: end, utcOffset: offset * 3600, value: value))
    }
}

extension ReadModels {
    /// Feeds `inputs` in one update, as a catch-up from the log would.
    func feed(_ inputs: [ProjectionInput], position: [UInt8] = [1]) throws {
        try update { update in
            for input in inputs { try update.add(input) }
            return position
        }
    }

    func dayTotals(_ metric: String = Build.steps) throws -> [String: Double] {
        Dictionary(uniqueKeysWithValues: try summary(metric: metric, by: .day).map { ($0.period, $0.value) })
    }
}

let d0 = LocalDay(year: 2024, month: 5, day: 6)

/// Everything the read models answer (rings, the summaries of `metrics` by every period, streaks,
/// goals, sources), as comparable lines.
func readModelAnswers(_ models: ReadModels, metrics: [String]) throws -> [String] {
    var lines = try models.rings().map { "\($0)" }
    for metric in metrics {
        for period in SummaryPeriod.allCases {
            lines += try models.summary(metric: metric, by: period).map {
                // Sums of the same pieces in another order may differ in the last bits.
                "\(metric) \($0.period) \(($0.value * 1e6).rounded()) \($0.samples) \(String(describing: $0.min)) \(String(describing: $0.max))"
            }
        }
    }
    lines.append("\(try models.streaks())")
    lines += try models.goalChanges().map { "\($0)" }
    lines += try models.sources().map { "\($0)" }
    lines += try models.heldTypes().map { "\($0)" }
    lines += try models.sleep().map { "\($0)" }
    for period in SummaryPeriod.allCases {
        lines += try models.workouts(by: period).map { "\($0.period) \($0.type) \($0.count) \(($0.minutes * 1e3).rounded()) \(($0.energy * 1e3).rounded()) \(($0.distance * 1e3).rounded())" }
    }
    return lines
}
