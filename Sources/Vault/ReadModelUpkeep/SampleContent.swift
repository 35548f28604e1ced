import BinaryCoding
import HealthModel
import VaultEvents

/// What a replaced sample is matched by outside the log that wrote its supersession: a hash of
/// its content, the same in every log (a re-key or an upgrade renumbers events, so the index a
/// `sampleSuperseded` event names holds only in the log that wrote it).
enum SampleContent {
    /// FNV-1a (64-bit) of the sample's encoding by a fresh encoder (strings interned in field
    /// order, metadata in canonical order): every field, independent of any log's tables.
    static func hash(_ sample: HealthSample) -> Int64 {
        let encoder = EventEncoder()
        var bytes: [UInt8] = []
        let (event, _) = encoder.encode(.sample(sample))
        for definition in encoder.takeDefinitions() { bytes += definition }
        bytes += event
        return Int64(bitPattern: FNV1a.hash(bytes))
    }

    /// Counts of replaced contents, taken down as their first samples are met in log order: the
    /// replaced copies of a content always come before its live copy (a slot's same value is a
    /// duplicate, never a second copy, while it is live).
    struct Skipping {
        private var remaining: [Int64: Int]

        init(_ counts: [Int64: Int]) {
            remaining = counts
        }

        var isEmpty: Bool { remaining.isEmpty }

        /// Whether `sample` is one of the replaced copies (and counts it off).
        mutating func skips(_ sample: HealthSample) -> Bool {
            guard !remaining.isEmpty else { return false }
            let key = SampleContent.hash(sample)
            guard let left = remaining[key] else { return false }
            remaining[key] = left > 1 ? left - 1 : nil
            return true
        }
    }
}
