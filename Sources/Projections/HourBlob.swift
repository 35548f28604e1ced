/// Stand hours of a day: format byte 1, then the hour numbers (hours since 1970, UTC) that had a
/// "stood" record, 8 bytes little-endian each, ascending.
enum HourBlob {
    static func encode(_ hours: Set<Int64>) -> [UInt8] {
        var out: [UInt8] = [1]
        for h in hours.sorted() {
            for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: h) >> (8 * UInt64(k)))) }
        }
        return out
    }

    static func decode(_ bytes: [UInt8]) throws -> Set<Int64> {
        guard let first = bytes.first else { return [] }
        guard first == 1, (bytes.count - 1) % 8 == 0 else { throw ProjectionError.corruptBlob(table: "stand_hours") }
        var hours = Set<Int64>()
        var p = 1
        while p < bytes.count {
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(bytes[p + k]) << (8 * UInt64(k)) }
            hours.insert(Int64(bitPattern: v))
            p += 8
        }
        return hours
    }
}
