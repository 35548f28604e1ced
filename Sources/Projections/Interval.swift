/// A cumulative sample's part inside one local day: [start, end) in seconds since 1970 (UTC),
/// its value pro-rated to that part, and the source that recorded it.
struct Interval: Equatable, Sendable {
    var start: Int64
    var end: Int64
    var value: Double
    var source: Int32

    /// A deterministic order, so that totals do not depend on the order events arrived in.
    static func precedes(_ a: Interval, _ b: Interval) -> Bool {
        if a.start != b.start { return a.start < b.start }
        if a.end != b.end { return a.end < b.end }
        if a.source != b.source { return a.source < b.source }
        return a.value < b.value
    }
}

/// The stored form of a day's intervals: format byte 1, then per interval
/// start (8 bytes LE), duration (4), value (8, IEEE 754 bits) and source id (4): 24 bytes.
enum IntervalBlob {
    static let format: UInt8 = 1
    static let stride = 24

    static func encode(_ intervals: [Interval]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(1 + intervals.count * stride)
        out.append(format)
        for i in intervals {
            append(&out, UInt64(bitPattern: i.start), 8)
            append(&out, UInt64(UInt32(truncatingIfNeeded: i.end - i.start)), 4)
            append(&out, i.value.bitPattern, 8)
            append(&out, UInt64(UInt32(bitPattern: i.source)), 4)
        }
        return out
    }

    static func decode(_ bytes: [UInt8], into out: inout [Interval]) throws {
        guard let first = bytes.first else { return }
        guard first == format, (bytes.count - 1) % stride == 0 else { throw ProjectionError.corruptBlob(table: "day_intervals") }
        out.reserveCapacity(out.count + (bytes.count - 1) / stride)
        var p = 1
        while p < bytes.count {
            let start = Int64(bitPattern: read(bytes, p, 8))
            let duration = Int64(read(bytes, p + 8, 4))
            let value = Double(bitPattern: read(bytes, p + 12, 8))
            let source = Int32(bitPattern: UInt32(read(bytes, p + 20, 4)))
            out.append(Interval(start: start, end: start + duration, value: value, source: source))
            p += stride
        }
    }

    private static func append(_ out: inout [UInt8], _ v: UInt64, _ n: Int) {
        for k in 0..<n { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(k)))) }
    }

    private static func read(_ b: [UInt8], _ p: Int, _ n: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<n { v |= UInt64(b[p + k]) << (8 * UInt64(k)) }
        return v
    }
}
