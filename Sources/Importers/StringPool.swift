#if canImport(Glibc)
import Glibc
#endif

/// Turns attribute bytes into `String`s, creating each distinct string once. Exports repeat the
/// same types, sources, units and metadata keys hundreds of thousands of times; a pooled string
/// costs a hash and a compare instead of an allocation.
struct StringPool {
    private var buckets: [UInt64: [(bytes: [UInt8], string: String)]] = [:]
    private var count = 0
    /// Unique values (sync identifiers) would grow the pool without bound; it starts over instead.
    /// 50,000 strings is about 7 MiB, far more than the types, sources and keys that repeat.
    static let capacity = 50_000

    mutating func string(_ raw: UnsafeRawBufferPointer) -> String {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in raw { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        if let bucket = buckets[h] {
            for entry in bucket where entry.bytes.count == raw.count {
                let same = entry.bytes.withUnsafeBytes { raw.count == 0 || memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 }
                if same { return entry.string }
            }
        }
        if count >= Self.capacity {
            buckets.removeAll(keepingCapacity: true)
            count = 0
        }
        let string = String(decoding: raw, as: UTF8.self)
        buckets[h, default: []].append((Array(raw), string))
        count += 1
        return string
    }
}
