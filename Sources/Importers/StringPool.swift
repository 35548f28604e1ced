import BinaryCoding
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns attribute bytes into `String`s, creating each distinct string once. Exports repeat the
/// same types, sources, units and metadata keys hundreds of thousands of times; a pooled string
/// costs a hash and a compare instead of an allocation.
///
/// An open-addressing table (linear probing, at most half full) of indexes into the entries,
/// whose bytes sit in one buffer: a lookup hashes the bytes eight at a time and compares them
/// once, without the two hashes and the bucket array a `Dictionary` of buckets cost
/// (docs/benchmarks-history.md, "The import's two threads, and the read models fed as it goes"). The
/// hash is seeded per pool, so an export cannot be written to make every string collide.
struct StringPool {
    private struct Entry {
        var hash: UInt64
        var offset: Int
        var count: Int
        var string: String
    }

    private var slots: [Int32]
    private var entries: [Entry] = []
    private var bytes: [UInt8] = []
    private let seed = UInt64.random(in: 1...UInt64.max)

    /// Unique values (sync identifiers) would grow the pool without bound; it starts over instead.
    /// 50,000 strings is about 7 MiB, far more than the types, sources and keys that repeat.
    static let capacity = 50_000

    /// Strings the pool starts with, and starts over with.
    private let known: [String]

    /// A pool holding `known` from the start. The catalog's identifiers and Apple's metadata keys
    /// are string literals, which Swift never reference-counts: records that share them with the
    /// import session's thread then share no count that both threads write.
    init(known: [String] = []) {
        var size = 1024
        while size < (Self.capacity + known.count) * 2 { size <<= 1 }
        slots = [Int32](repeating: -1, count: size)
        self.known = known
        addKnown()
    }

    private mutating func addKnown() {
        for string in known {
            var copy = string
            copy.withUTF8 { _ = self.string(UnsafeRawBufferPointer($0), making: string) }
        }
    }

    mutating func string(_ raw: UnsafeRawBufferPointer) -> String {
        string(raw, making: nil)
    }

    /// Strings held now, the known ones included.
    var count: Int { entries.count }

    /// The pooled string of `raw`; when new, `made` (or a string decoded from `raw`) is added.
    private mutating func string(_ raw: UnsafeRawBufferPointer, making made: String?) -> String {
        let hash = WordHash.hash(raw, seed: seed)
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let index = slots[i]
            if index < 0 { break }
            let entry = entries[Int(index)]
            if entry.hash == hash, entry.count == raw.count, same(entry, raw) { return entry.string }
            i = (i + 1) & mask
        }
        if entries.count >= Self.capacity + known.count {
            for j in slots.indices { slots[j] = -1 }
            entries.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            addKnown()
            return string(raw, making: made)
        }
        let string = made ?? String(decoding: raw, as: UTF8.self)
        slots[i] = Int32(entries.count)
        entries.append(Entry(hash: hash, offset: bytes.count, count: raw.count, string: string))
        bytes.append(contentsOf: raw)
        return string
    }

    private func same(_ entry: Entry, _ raw: UnsafeRawBufferPointer) -> Bool {
        guard raw.count > 0 else { return true }
        return bytes.withUnsafeBytes { memcmp($0.baseAddress! + entry.offset, raw.baseAddress!, raw.count) == 0 }
    }
}
