
/// An instant with the UTC offset it was written with, as Apple's exports give them
/// (`2024-01-01 01:01:36 +0200`): the offset decides which local day a sample belongs to.
public struct HealthTimestamp: Equatable, Hashable, Sendable {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var seconds: Int64
    /// Seconds east of UTC.
    public var utcOffset: Int32

    @inlinable
    public init(seconds: Int64, utcOffset: Int32) {
        self.seconds = seconds
        self.utcOffset = utcOffset
    }

    /// Parses `YYYY-MM-DD HH:MM:SS ±HHMM` (Apple's export format), or the compact
    /// `YYYYMMDDHHMMSS±HHMM` that iOS 8 and early iOS 9 exports wrote. `nil` for anything else.
    public static func parseExportDate(_ b: UnsafeRawBufferPointer) -> HealthTimestamp? {
        // Where each field starts in the two forms.
        let at: (month: Int, day: Int, hour: Int, minute: Int, second: Int, sign: Int)
        if b.count == 25, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20 {
            at = (5, 8, 11, 14, 17, 20)
        } else if b.count == 19 {
            at = (4, 6, 8, 10, 12, 14)
        } else {
            return nil
        }
        guard let year = digits(b, 0, 4), let month = digits(b, at.month, 2), let day = digits(b, at.day, 2),
              let hour = digits(b, at.hour, 2), let minute = digits(b, at.minute, 2), let second = digits(b, at.second, 2),
              let offsetHours = digits(b, at.sign + 1, 2), let offsetMinutes = digits(b, at.sign + 3, 2) else { return nil }
        let sign: Int64
        switch b[at.sign] {
        case 0x2B: sign = 1
        case 0x2D: sign = -1
        default: return nil
        }
        guard (1...12).contains(month), (1...daysInMonth(year, month)).contains(day), hour < 24, minute < 60, second < 61,
              offsetHours <= 14, offsetMinutes < 60 else { return nil }
        let offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        let local = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        return HealthTimestamp(seconds: local - offset, utcOffset: Int32(offset))
    }

    /// Parses ISO 8601 `YYYY-MM-DDTHH:MM:SS(.fff)?(Z|±HH:MM)` (GPX times). Fractions are dropped.
    public static func parseISO8601(_ b: UnsafeRawBufferPointer) -> HealthTimestamp? {
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
              let year = digits(b, 0, 4), let month = digits(b, 5, 2), let day = digits(b, 8, 2),
              let hour = digits(b, 11, 2), let minute = digits(b, 14, 2), let second = digits(b, 17, 2),
              (1...12).contains(month), (1...daysInMonth(year, month)).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var i = 19
        if b[i] == 0x2E {
            i += 1
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
        }
        var offset: Int64 = 0
        if i < b.count, b[i] == 0x5A {
            i += 1
        } else if i + 6 == b.count, b[i] == 0x2B || b[i] == 0x2D, b[i + 3] == 0x3A,
                  let oh = digits(b, i + 1, 2), let om = digits(b, i + 4, 2), oh <= 14, om < 60 {
            offset = (b[i] == 0x2B ? 1 : -1) * (oh * 3600 + om * 60)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let local = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        return HealthTimestamp(seconds: local - offset, utcOffset: Int32(offset))
    }

    /// Parses `YYYY-MM-DD` into a day number (days since 1970-01-01).
    public static func parseDay(_ b: UnsafeRawBufferPointer) -> Int64? {
        guard b.count == 10, b[4] == 0x2D, b[7] == 0x2D,
              let year = digits(b, 0, 4), let month = digits(b, 5, 2), let day = digits(b, 8, 2),
              (1...12).contains(month), (1...daysInMonth(year, month)).contains(day) else { return nil }
        return daysFromCivil(year, month, day)
    }

    /// The decimal number in `count` ASCII digits from `start`; nil if any is not a digit.
    @inline(__always)
    public static func digits(_ b: UnsafeRawBufferPointer, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for i in start..<(start + count) {
            let d = b[i] &- 0x30
            guard d < 10 else { return nil }
            value = value * 10 + Int64(d)
        }
        return value
    }

    public static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 { LocalDay.daysInMonth(year, month) }

    public static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 { LocalDay.daysFromCivil(year, month, day) }

    /// `2024-01-01T08:00:00+01:00`, in the timestamp's own offset.
    public var iso8601: String {
        var out: [UInt8] = []
        appendISO8601(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `iso8601`'s bytes (bundles write millions of them).
    public func appendISO8601(to out: inout [UInt8]) {
        let local = seconds + Int64(utcOffset)
        let dayNumber = LocalDay.floorDivide(local, 86_400)
        let (y, m, d) = LocalDay.civil(fromDays: dayNumber)
        let second = local - dayNumber * 86_400
        func put(_ v: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = v
            while divisor > 0 {
                out.append(0x30 + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        if y < 0 || y > 9999 { out += Array(String(y).utf8) } else { put(y, 4) }
        out.append(0x2D); put(m, 2); out.append(0x2D); put(d, 2)
        out.append(0x54); put(second / 3600, 2); out.append(0x3A); put(second / 60 % 60, 2); out.append(0x3A); put(second % 60, 2)
        let offset = Int64(utcOffset)
        out.append(offset < 0 ? 0x2D : 0x2B)
        put(abs(offset) / 3600, 2); out.append(0x3A); put(abs(offset) / 60 % 60, 2)
    }
}
