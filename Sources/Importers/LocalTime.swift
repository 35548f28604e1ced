import Foundation
import HealthModel

/// Times written without an offset (`2025-08-06 08:00`) are local to the person: read in the
/// machine's time zone (`TZ`), with the offset that applied on that date, DST included.
public enum LocalTime {
    /// Parses `YYYY-MM-DD HH:MM(:SS)?` or `YYYY-MM-DDTHH:MM(:SS)?`, local.
    public static func parse(_ text: Substring, timeZone: TimeZone) -> HealthTimestamp? {
        // A native string's bytes are read where they lie (a copy of them was a third of this).
        let read = text.utf8.withContiguousStorageIfAvailable { localSeconds(UnsafeRawBufferPointer($0)) }
        guard let local = read ?? Array(text.utf8).withUnsafeBytes(localSeconds) else { return nil }
        // The offset in force at that wall-clock time: try the offset at the naive instant, then settle.
        var offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local))))
        offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local - offset))))
        return HealthTimestamp(seconds: local - offset, utcOffset: Int32(offset))
    }

    /// Seconds since 1970 of the wall-clock time, as if it were UTC.
    private static func localSeconds(_ b: UnsafeRawBufferPointer) -> Int64? {
        guard b.count == 16 || b.count == 19, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20 || b[10] == 0x54, b[13] == 0x3A,
              let y = HealthTimestamp.digits(b, 0, 4), let mo = HealthTimestamp.digits(b, 5, 2), let d = HealthTimestamp.digits(b, 8, 2),
              let h = HealthTimestamp.digits(b, 11, 2), let mi = HealthTimestamp.digits(b, 14, 2),
              (1...12).contains(mo), (1...HealthTimestamp.daysInMonth(y, mo)).contains(d), h < 24, mi < 60 else { return nil }
        var s: Int64 = 0
        if b.count == 19 {
            guard b[16] == 0x3A, let sec = HealthTimestamp.digits(b, 17, 2), sec < 61 else { return nil }
            s = sec
        }
        return HealthTimestamp.daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s
    }

    /// Any timestamp form the CSV accepts: Apple's, ISO 8601 with an offset, or local.
    static func parseAny(_ text: Substring, timeZone: TimeZone) -> HealthTimestamp? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { raw in
            HealthTimestamp.parseExportDate(raw) ?? HealthTimestamp.parseISO8601(raw)
        } ?? parse(text, timeZone: timeZone)
    }
}
