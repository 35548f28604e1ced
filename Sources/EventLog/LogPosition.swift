/// A point in the log just after a committed frame: what a projection stores next to its data so
/// that it resumes exactly where it stopped, and can tell whether the log under it changed.
public struct LogPosition: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Sequence number of the last frame read (0 before the first frame).
    public var sequence: UInt64
    /// Number of events up to and including that frame.
    public var eventCount: UInt64
    /// Byte offset just past that frame.
    public var offset: UInt64
    /// Chain hash of that frame (the genesis hash before the first frame).
    public var chainHash: [UInt8]

    public init(sequence: UInt64, eventCount: UInt64, offset: UInt64, chainHash: [UInt8]) {
        self.sequence = sequence
        self.eventCount = eventCount
        self.offset = offset
        self.chainHash = chainHash
    }

    public var description: String { "frame #\(sequence), \(eventCount) events, offset \(offset)" }
}

/// What opening the log found and repaired at its end.
public struct TornTail: Equatable, Sendable, CustomStringConvertible {
    /// Where the discarded bytes start: the end of the last committed frame.
    public var offset: UInt64
    /// How many bytes were (or, read-only, would be) cut.
    public var length: UInt64
    /// Uncommitted frames that were complete but belong to a batch that never committed.
    public var uncommittedFrames: Int
    /// Where a writer kept the cut bytes before cutting them (`events.log.torn.N` beside the log),
    /// and their BLAKE2b-256; nil until cut.
    public var keptAs: String? = nil
    public var digest: [UInt8]? = nil

    public var description: String {
        "torn tail: \(length) bytes after offset \(offset) belong to no committed batch"
            + (uncommittedFrames > 0 ? " (\(uncommittedFrames) uncommitted frames)" : "")
            + (keptAs.map { "; cut, and kept as \($0)" } ?? "")
    }
}
