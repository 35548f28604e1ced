import Foundation

/// The audit record of a torn tail a writer cut off the log (docs/log-format.md, "Commit,
/// recovery and damage"): where, how many bytes, their BLAKE2b-256, and the file they were kept
/// in first. A crash leaves such a tail; so does an older head record put back over a log cut
/// inside the frame after it, and then the kept bytes are a commit someone took away.
public struct TailCutRecord: Hashable, Sendable {
    public var at: Date
    /// Byte offset in `events.log` the cut starts at (the end of the last commit).
    public var offset: UInt64
    public var length: UInt64
    /// BLAKE2b-256 of the cut bytes, hex.
    public var digest: String
    /// The file beside the log that holds them (`events.log.torn.N`).
    public var keptAs: String

    public init(at: Date, offset: UInt64, length: UInt64, digest: String, keptAs: String) {
        self.at = at
        self.offset = offset
        self.length = length
        self.digest = digest
        self.keptAs = keptAs
    }
}
