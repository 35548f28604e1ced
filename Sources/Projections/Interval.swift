import BinaryCoding

/// A cumulative sample's part inside one local day: [start, end) in seconds since 1970 (UTC),
/// its value pro-rated to that part, the source that recorded it, and how many days after the
/// sample's first day this part's day is (0 but for the later parts of a sample across midnight),
/// so that erasing a month removes exactly the parts of the samples that started in it; and what
/// tells an app's rewritten copy from a distinct sample (`RewrittenCopies`): the sample's metadata
/// digest, and its creation date as seconds after this part's end.
struct Interval: Equatable, Sendable {
    var start: Int64
    var end: Int64
    var value: Double
    var source: Int32
    var daysAfterOrigin: Int32 = 0
    var metadataDigest: UInt32 = 0
    var creation: Int32 = Interval.noCreation

    /// `creation` of a sample whose creation date is not known.
    static let noCreation = Int32.min

    /// `creation` for a sample created at `created` (seconds since 1970), of a part ending at `end`.
    static func creation(_ created: Int64?, partEnd end: Int64) -> Int32 {
        guard let created else { return noCreation }
        return Int32(clamping: max(created &- end, Int64(Int32.min) + 1))
    }

    /// Whether the two are the same part of samples equal in all but their creation date.
    func hasContent(of other: Interval) -> Bool {
        start == other.start && end == other.end && value == other.value && source == other.source
            && daysAfterOrigin == other.daysAfterOrigin && metadataDigest == other.metadataDigest
    }

    /// A deterministic order, so that totals do not depend on the order events arrived in; the
    /// copies of one content are next to each other, grouped by creation.
    static func precedes(_ a: Interval, _ b: Interval) -> Bool {
        if a.start != b.start { return a.start < b.start }
        if a.end != b.end { return a.end < b.end }
        if a.source != b.source { return a.source < b.source }
        if a.value != b.value { return a.value < b.value }
        if a.daysAfterOrigin != b.daysAfterOrigin { return a.daysAfterOrigin < b.daysAfterOrigin }
        if a.metadataDigest != b.metadataDigest { return a.metadataDigest < b.metadataDigest }
        return a.creation < b.creation
    }
}

/// An app's rewritten copies of a sample: identical in type, source, span, value and metadata but
/// for their creation date (one app wrote the same 15-minute energy samples up to 17 times, a
/// second apart). The log keeps every copy; totals count the content once.
///
/// Records equal in every field, their creation date too, stay distinct (two glasses of water
/// logged at once; `IdentitySet` keeps both). So among the copies of one content, the most that
/// share one creation date count: one for a content rewritten, two for two glasses, two for two
/// glasses rewritten.
enum RewrittenCopies {
    /// The digest an interval carries: the sample's metadata digest when the interval is the whole
    /// sample; for a part of a sample split at midnight or at an hour, the digest mixed with the
    /// sample's own span, so that parts of two different samples that happen to cover the same
    /// stretch with the same value (22:00–02:00 and 23:00–02:00 at one rate, after midnight) are
    /// never taken for copies of one sample. Never 0 for a part.
    static func digest(metadata: UInt32, sampleStart: Int64, sampleEnd: Int64, whole: Bool) -> UInt32 {
        guard !whole else { return metadata }
        var hash = FNV1a()
        for word in [UInt64(metadata), UInt64(bitPattern: sampleStart), UInt64(bitPattern: sampleEnd)] { hash.add(littleEndian: word) }
        let folded = UInt32(truncatingIfNeeded: hash.value ^ (hash.value >> 32))
        return folded == 0 ? 1 : folded
    }

    /// `intervals` (sorted by `Interval.precedes`) without the rewritten copies; the same array
    /// when it has none.
    static func countedOnce(_ intervals: [Interval]) -> [Interval] {
        guard hasAny(intervals) else { return intervals }
        var kept: [Interval] = []
        kept.reserveCapacity(intervals.count)
        forEachContent(intervals) { run, counted in kept.append(contentsOf: run.prefix(counted)) }
        return kept
    }

    /// How many samples' first parts (`daysAfterOrigin` 0: a sample across midnight is counted on
    /// its first day only) in sorted `intervals` are rewritten copies, not counted.
    static func excess(_ intervals: [Interval]) -> Int {
        guard hasAny(intervals) else { return 0 }
        var excess = 0
        forEachContent(intervals) { run, counted in
            if run[run.startIndex].daysAfterOrigin == 0 { excess += run.count - counted }
        }
        return excess
    }

    private static func hasAny(_ intervals: [Interval]) -> Bool {
        var i = 1
        while i < intervals.count {
            if intervals[i].hasContent(of: intervals[i - 1]) && intervals[i].creation != intervals[i - 1].creation { return true }
            i += 1
        }
        return false
    }

    /// Calls `body` with each run of one content and how many of it count: the largest group
    /// of one creation date.
    private static func forEachContent(_ intervals: [Interval], _ body: (ArraySlice<Interval>, Int) -> Void) {
        var runStart = 0
        while runStart < intervals.count {
            var runEnd = runStart + 1
            var largest = 1, group = 1
            while runEnd < intervals.count, intervals[runEnd].hasContent(of: intervals[runStart]) {
                group = intervals[runEnd].creation == intervals[runEnd - 1].creation ? group + 1 : 1
                largest = max(largest, group)
                runEnd += 1
            }
            body(intervals[runStart..<runEnd], largest)
            runStart = runEnd
        }
    }
}

/// The stored form of a day's intervals (docs/projections.md): format byte 3, then per interval
/// LEB128 varints: the start as a zigzag delta from the previous one (the first from 0), the
/// duration, the source id shifted left three times with bit 0 set for a later part (whose days
/// after its origin follow as a varint), bit 1 for a metadata digest and bit 2 for a creation
/// date (seconds after the interval's end, zigzag), each following as a varint when set,
/// and the value: a decimal `zigzag(m) << 4 | s` meaning m / 10^s when that is exactly the value
/// (s ≤ 9), else 15 followed by the 8 IEEE 754 bytes. Format 2 (no digest or creation) is read
/// models of an older format, which are rebuilt, never read.
enum IntervalBlob {
    static let format: UInt8 = 3
    private static let powers: [Double] = (0...9).map { pow10($0) }
    private static let rawValue: UInt64 = 15

    private static func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { result, _ in result * 10 } }

    static func encode(_ intervals: [Interval]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(1 + intervals.count * 8)
        out.append(format)
        var previous: Int64 = 0
        for i in intervals {
            Varint.encode(ZigZag.encode(i.start &- previous), into: &out)
            previous = i.start
            Varint.encode(UInt64(max(0, i.end - i.start)), into: &out)
            let later = i.daysAfterOrigin > 0
            let digested = i.metadataDigest != 0, created = i.creation != Interval.noCreation
            Varint.encode(UInt64(UInt32(bitPattern: i.source)) << 3 | (created ? 4 : 0) | (digested ? 2 : 0) | (later ? 1 : 0), into: &out)
            if later { Varint.encode(UInt64(i.daysAfterOrigin), into: &out) }
            if digested { Varint.encode(UInt64(i.metadataDigest), into: &out) }
            if created { Varint.encode(ZigZag.encode(Int64(i.creation)), into: &out) }
            appendValue(&out, i.value)
        }
        return out
    }

    static func decode(_ bytes: [UInt8], into out: inout [Interval]) throws {
        guard let first = bytes.first else { return }
        guard first == format else { throw ProjectionError.corruptBlob(table: "day_intervals") }
        var p = 1
        var previous: Int64 = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard p < bytes.count, shift < 64 else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                let byte = bytes[p]
                p += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
        while p < bytes.count {
            let start = previous &+ ZigZag.decode(try varint())
            previous = start
            let duration = try varint()
            let sourceWord = try varint()
            guard duration <= UInt64(UInt32.max), sourceWord >> 3 <= UInt64(UInt32.max) else { throw ProjectionError.corruptBlob(table: "day_intervals") }
            var daysAfter: Int32 = 0
            if sourceWord & 1 == 1 {
                let days = try varint()
                guard days > 0, days <= UInt64(Int32.max) else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                daysAfter = Int32(days)
            }
            var digest: UInt32 = 0
            var creation = Interval.noCreation
            if sourceWord & 2 == 2 {
                let stored = try varint()
                guard stored > 0, stored <= UInt64(UInt32.max) else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                digest = UInt32(stored)
            }
            if sourceWord & 4 == 4 {
                let stored = try varint()
                guard stored < UInt64(UInt32.max) else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                creation = Int32(ZigZag.decode(stored))
            }
            let word = try varint()
            let value: Double
            if word == rawValue {
                guard p + 8 <= bytes.count else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                var bits: UInt64 = 0
                for k in 0..<8 { bits |= UInt64(bytes[p + k]) << (8 * UInt64(k)) }
                p += 8
                value = Double(bitPattern: bits)
            } else {
                let scale = Int(word & 0xF)
                guard scale < powers.count else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                value = Double(ZigZag.decode(word >> 4)) / powers[scale]
            }
            out.append(Interval(start: start, end: start + Int64(duration), value: value,
                                source: Int32(bitPattern: UInt32(sourceWord >> 3)), daysAfterOrigin: daysAfter,
                                metadataDigest: digest, creation: creation))
        }
    }

    /// The shortest exact decimal form of `value`, or its raw bits.
    private static func appendValue(_ out: inout [UInt8], _ value: Double) {
        if value.isFinite {
            for (scale, power) in powers.enumerated() {
                let scaled = (value * power).rounded()
                guard abs(scaled) < 9.0e15 else { break }
                let mantissa = Int64(scaled)
                if Double(mantissa) / power == value, value != 0 || value.sign == .plus {
                    Varint.encode(ZigZag.encode(mantissa) << 4 | UInt64(scale), into: &out)
                    return
                }
            }
        }
        Varint.encode(rawValue, into: &out)
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: value.bitPattern >> (8 * UInt64(k)))) }
    }
}
