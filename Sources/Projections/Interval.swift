/// A cumulative sample's part inside one local day: [start, end) in seconds since 1970 (UTC),
/// its value pro-rated to that part, the source that recorded it, and how many days after the
/// sample's first day this part's day is (0 but for the later parts of a sample across midnight),
/// so that erasing a month removes exactly the parts of the samples that started in it.
struct Interval: Equatable, Sendable {
    var start: Int64
    var end: Int64
    var value: Double
    var source: Int32
    var daysAfterOrigin: Int32 = 0

    /// A deterministic order, so that totals do not depend on the order events arrived in.
    static func precedes(_ a: Interval, _ b: Interval) -> Bool {
        if a.start != b.start { return a.start < b.start }
        if a.end != b.end { return a.end < b.end }
        if a.source != b.source { return a.source < b.source }
        if a.value != b.value { return a.value < b.value }
        return a.daysAfterOrigin < b.daysAfterOrigin
    }
}

/// The stored form of a day's intervals (docs/projections.md): format byte 2, then per interval
/// LEB128 varints: the start as a zigzag delta from the previous one (the first from 0), the
/// duration, the source id shifted left once with the low bit set for a later part (whose days
/// after its origin follow as a varint), and the value: a decimal `zigzag(m) << 4 | s` meaning
/// m / 10^s when that is exactly the value (s ≤ 9), else 15 followed by the 8 IEEE 754 bytes.
/// About 6 bytes an interval where format 1 took 24.
enum IntervalBlob {
    static let format: UInt8 = 2
    private static let powers: [Double] = (0...9).map { pow10($0) }
    private static let rawValue: UInt64 = 15

    private static func pow10(_ n: Int) -> Double { (0..<n).reduce(1.0) { result, _ in result * 10 } }

    static func encode(_ intervals: [Interval]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(1 + intervals.count * 8)
        out.append(format)
        var previous: Int64 = 0
        for i in intervals {
            appendVarint(&out, zigzag(i.start &- previous))
            previous = i.start
            appendVarint(&out, UInt64(max(0, i.end - i.start)))
            let later = i.daysAfterOrigin > 0
            appendVarint(&out, UInt64(UInt32(bitPattern: i.source)) << 1 | (later ? 1 : 0))
            if later { appendVarint(&out, UInt64(i.daysAfterOrigin)) }
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
            let start = previous &+ unzigzag(try varint())
            previous = start
            let duration = try varint()
            let sourceWord = try varint()
            guard duration <= UInt64(UInt32.max), sourceWord >> 1 <= UInt64(UInt32.max) else { throw ProjectionError.corruptBlob(table: "day_intervals") }
            var daysAfter: Int32 = 0
            if sourceWord & 1 == 1 {
                let days = try varint()
                guard days > 0, days <= UInt64(Int32.max) else { throw ProjectionError.corruptBlob(table: "day_intervals") }
                daysAfter = Int32(days)
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
                value = Double(unzigzag(word >> 4)) / powers[scale]
            }
            out.append(Interval(start: start, end: start + Int64(duration), value: value,
                                source: Int32(bitPattern: UInt32(sourceWord >> 1)), daysAfterOrigin: daysAfter))
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
                    appendVarint(&out, zigzag(mantissa) << 4 | UInt64(scale))
                    return
                }
            }
        }
        appendVarint(&out, rawValue)
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: value.bitPattern >> (8 * UInt64(k)))) }
    }

    private static func appendVarint(_ out: inout [UInt8], _ value: UInt64) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    private static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    private static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1) }
}
