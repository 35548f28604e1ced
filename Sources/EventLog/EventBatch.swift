import BinaryCoding
/// Events to append in one durable commit, laid out as they will be in a frame's plaintext
/// (each event a varint length followed by its bytes) so that sealing needs no copying.
///
/// The log treats events as opaque bytes; what they mean is the caller's business.
public struct EventBatch: Sendable {
    /// The largest single event a frame can hold.
    public static let maxEventSize = LogFormat.maxPlaintextLength - 10

    var payload: [UInt8] = []
    /// Offset in `payload` just past each event, to cut frames on event boundaries.
    var ends: [Int] = []

    /// An empty batch; `reservingCapacity` is a hint in payload bytes.
    public init(reservingCapacity capacity: Int = 0) {
        payload.reserveCapacity(capacity)
    }

    /// Number of events in the batch.
    public var count: Int { ends.count }
    /// Whether the batch holds no event.
    public var isEmpty: Bool { ends.isEmpty }
    /// Bytes the events take in frame plaintext, length prefixes included.
    public var byteCount: Int { payload.count }

    /// Adds one event.
    public mutating func append(_ event: UnsafeRawBufferPointer) throws {
        guard event.count <= Self.maxEventSize else {
            throw EventLogError.eventTooLarge(size: event.count, limit: Self.maxEventSize)
        }
        Varint.encode(UInt64(event.count), into: &payload)
        payload.append(contentsOf: event)
        ends.append(payload.count)
    }

    /// Adds one event.
    public mutating func append(_ event: [UInt8]) throws {
        try event.withUnsafeBytes { try append($0) }
    }

    /// Removes every event, keeping the storage for reuse.
    public mutating func removeAll() {
        payload.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// Splits the payload into frame-sized runs of whole events: (payload range, event count).
    func frameSlices(targetSize: Int) -> [(range: Range<Int>, events: Int)] {
        var slices: [(Range<Int>, Int)] = []
        var start = 0
        var events = 0
        var previousEnd = 0
        for end in ends {
            if events > 0 && end - start > targetSize {
                slices.append((start..<previousEnd, events))
                start = previousEnd
                events = 0
            }
            events += 1
            previousEnd = end
        }
        if events > 0 { slices.append((start..<previousEnd, events)) }
        return slices
    }
}
