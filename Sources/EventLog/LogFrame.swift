import BinaryCoding
/// One frame as a reader delivers it: authenticated and decrypted, or, when its key was
/// destroyed (`isErased`), in its place in the chain with no events to give.
public struct LogFrame: Sendable {
    /// Frame number (1-based).
    public let sequence: UInt64
    /// Byte offset of the frame in the log file.
    public let offset: UInt64
    /// Whether this frame ends a committed batch.
    public let isCommit: Bool
    /// Index of the first event of this frame in the whole log (0-based).
    public let firstEventIndex: UInt64
    /// The log position just after this frame.
    public let position: LogPosition
    /// The chain hash this frame's header links to.
    let previousHash: [UInt8]
    /// The key the frame is sealed with (`LogFormat.auditKeyID` or a key table id).
    public let keyID: UInt32
    /// Whether the frame's key was destroyed: its ciphertext is chained but can never be read.
    public let isErased: Bool
    /// Events the header counts, readable or not.
    public let headerEventCount: Int

    let plaintext: [UInt8]
    /// Start and end of each event's bytes in `plaintext`.
    let eventRanges: [Range<Int>]

    /// Number of events the frame gives (none when it is erased).
    public var eventCount: Int { eventRanges.count }

    /// Size of the frame on disk, header and tag included.
    public var encodedSize: UInt64 { position.offset - offset }

    /// The bytes of event `index` (0-based within the frame).
    public func event(at index: Int) -> ArraySlice<UInt8> {
        plaintext[eventRanges[index]]
    }

    /// Calls `body` for each event with its log-wide index and bytes, without copying.
    public func forEachEvent(_ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try plaintext.withUnsafeBytes { raw in
            for (i, range) in eventRanges.enumerated() {
                try body(firstEventIndex + UInt64(i), UnsafeRawBufferPointer(rebasing: raw[range]))
            }
        }
    }

    /// Splits a plaintext into event ranges; `nil` unless it holds exactly `count` well-formed events.
    static func parseEvents(_ plaintext: UnsafeRawBufferPointer, count: Int) -> [Range<Int>]? {
        var ranges: [Range<Int>] = []
        // Each event takes at least one byte, so the count cannot exceed the plaintext's size.
        guard count <= plaintext.count || (count == 0 && plaintext.isEmpty) else { return nil }
        ranges.reserveCapacity(count)
        var offset = 0
        while offset < plaintext.count {
            guard let length = Varint.decode(plaintext, offset: &offset),
                  length <= UInt64(plaintext.count - offset) else { return nil }
            let end = offset + Int(length)
            ranges.append(offset..<end)
            offset = end
            if ranges.count > count { return nil }
        }
        return ranges.count == count ? ranges : nil
    }
}
