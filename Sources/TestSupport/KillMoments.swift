import Foundation

/// When to SIGKILL a command so that the kill lands in its work, not after it ended: up to a
/// quarter past the longest of its last three runs to the end, half as far again after each kill
/// in a row (so a run that grew is reached), at most 2 s; before it has run to its end,
/// `firstSpan`. Commands are told apart by a name of the caller's (`passwd --rekey` apart from
/// `passwd`, say), each timed on its own.
public struct KillMoments {
    private let floor: UInt32
    private let firstSpan: UInt32
    private var lastRuns: [String: [Double]] = [:]
    private var killsInARow: [String: Int] = [:]
    /// Kills per command so far.
    public private(set) var kills: [String: Int] = [:]

    /// - Parameters:
    ///   - floor: the earliest moment, in microseconds.
    ///   - firstSpan: the latest moment before the command has run to its end, in microseconds.
    public init(floor: UInt32 = 0, firstSpan: UInt32 = 450_000) {
        self.floor = floor
        self.firstSpan = firstSpan
    }

    /// A moment, in microseconds after the start, to kill `command` at.
    public func draw(for command: String, using generator: inout some RandomNumberGenerator) -> UInt32 {
        let reach = lastRuns[command, default: []].max().map { max($0 * 1.25, 0.02) * pow(1.5, Double(killsInARow[command, default: 0])) }
        let span = reach.map { UInt32(min($0, 2) * 1e6) } ?? firstSpan
        return UInt32.random(in: floor...max(span, floor), using: &generator)
    }

    /// Notes how a run of `command` ended: killed, or finished after `seconds`.
    public mutating func record(_ command: String, finished: Bool, seconds: Double?) {
        if finished {
            killsInARow[command] = 0
            if let seconds { lastRuns[command] = Array((lastRuns[command, default: []] + [seconds]).suffix(3)) }
        } else {
            killsInARow[command, default: 0] += 1
            kills[command, default: 0] += 1
        }
    }
}
