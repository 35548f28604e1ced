/// A calendar day as the person lived it: the day of an instant in the UTC offset the sample
/// was recorded with, so that travel and DST days land where the Health app puts them.
public struct LocalDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01 in the local calendar.
    public let dayNumber: Int64

    public init(dayNumber: Int64) {
        self.dayNumber = dayNumber
    }

    /// The local day of `instant` (seconds since 1970, UTC) at `utcOffset` seconds east of UTC.
    public init(instant: Int64, utcOffset: Int32) {
        dayNumber = Self.floorDivide(instant + Int64(utcOffset), 86_400)
    }

    /// The day with this proleptic Gregorian date.
    public init(year: Int, month: Int, day: Int) {
        // Howard Hinnant's days_from_civil.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = Self.floorDivide(y, 400)
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        dayNumber = era * 146_097 + doe - 719_468
    }

    /// Year, month (1–12) and day (1–31).
    public var date: (year: Int, month: Int, day: Int) {
        // Howard Hinnant's civil_from_days.
        let z = dayNumber + 719_468
        let era = Self.floorDivide(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    /// The UTC instant at which this day starts at `utcOffset`.
    public func startInstant(utcOffset: Int32) -> Int64 {
        dayNumber * 86_400 - Int64(utcOffset)
    }

    /// `YYYY-MM-DD`, the spec's day key.
    public var description: String {
        let (y, m, d) = date
        return "\(y)-\(m < 10 ? "0" : "")\(m)-\(d < 10 ? "0" : "")\(d)"
    }

    public static func < (a: LocalDay, b: LocalDay) -> Bool { a.dayNumber < b.dayNumber }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}

/// Splits a cumulative value recorded over [start, end) across the local days it touches, in
/// proportion to the time spent in each; an instantaneous sample goes wholly to its day.
public func splitAcrossLocalDays(start: Int64, end: Int64, utcOffset: Int32, value: Double) -> [(day: LocalDay, value: Double)] {
    let first = LocalDay(instant: start, utcOffset: utcOffset)
    guard end > start else { return [(first, value)] }
    let last = LocalDay(instant: end - 1, utcOffset: utcOffset)
    if first == last { return [(first, value)] }
    let duration = Double(end - start)
    var parts: [(LocalDay, Double)] = []
    var cursor = start
    for number in first.dayNumber...last.dayNumber {
        let day = LocalDay(dayNumber: number)
        let dayEnd = min(end, LocalDay(dayNumber: number + 1).startInstant(utcOffset: utcOffset))
        parts.append((day, value * Double(dayEnd - cursor) / duration))
        cursor = dayEnd
    }
    return parts
}
