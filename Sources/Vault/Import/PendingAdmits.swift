import HandOff
import HealthModel

/// Samples whose identity is hashed and whose slot in the identity table was asked for
/// (`IdentitySet.prefetch`), waiting to be decided in the order they came. A lookup in a table of
/// tens of MiB waits for memory (about 200 ns each on this machine, a quarter of a FIT folder's
/// session thread); decided `capacity` samples later, the waits overlap with the encoding of the
/// samples between (docs/benchmarks.md, "FIT import").
///
/// The encoded bytes are copied into one buffer, so that the encoder's buffer is reused for the
/// next sample as before; the sample is kept for the read models' feed, moved in and out
/// (`MovingBuffer`: read out of an array, each sample was copied, its strings retained).
struct PendingAdmits {
    struct Entry {
        var hash: UInt64
        var legacy: UInt64?
        var keyID: UInt32
        var nested: Bool
        /// The event's bytes in `bytes`.
        var range: Range<Int>
    }

    static let capacity = 32

    private(set) var entries: [Entry] = []
    private(set) var bytes: [UInt8] = []
    /// The entries' samples, in order; `withContents` hands them out.
    let samples = MovingBuffer<HealthSample>(capacity: PendingAdmits.capacity)

    init() {
        entries.reserveCapacity(Self.capacity)
        bytes.reserveCapacity(Self.capacity * 128)
    }

    var isEmpty: Bool { entries.isEmpty }
    var isFull: Bool { entries.count >= Self.capacity }
    var count: Int { entries.count }

    mutating func add(_ encoded: [UInt8], hash: UInt64, legacy: UInt64?, keyID: UInt32, nested: Bool, sample: consuming HealthSample) {
        let start = bytes.count
        bytes.append(contentsOf: encoded)
        entries.append(Entry(hash: hash, legacy: legacy, keyID: keyID, nested: nested, range: start..<bytes.count))
        samples.append(sample)
    }

    /// Calls `body` with the entries, the bytes their ranges point into, and their samples,
    /// which `body` takes out in order (`takeNext`, once per entry it reaches; what it does not
    /// take is destroyed by `removeAll`).
    func withContents<R>(_ body: (UnsafeBufferPointer<Entry>, UnsafeRawBufferPointer, MovingBuffer<HealthSample>) throws -> R) rethrows -> R {
        try entries.withUnsafeBufferPointer { entries in
            try bytes.withUnsafeBytes { bytes in try body(entries, bytes, samples) }
        }
    }

    /// Forgets every entry, keeping the buffers' memory.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        samples.removeAll()
    }
}
