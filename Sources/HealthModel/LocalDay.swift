/// A calendar day as the person lived it: the day of an instant in the UTC offset the sample
/// was recorded with, so that travel and DST days land where the Health app puts them.
public struct LocalDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01 in the local calendar.
    public let dayNumber: Int64

    @inlinable
    public init(dayNumber: Int64) {
        self.dayNumber = dayNumber
    }

    /// The local day of `instant` (seconds since 1970, UTC) at `utcOffset` seconds east of UTC.
    @inlinable
    public init(instant: Int64, utcOffset: Int32) {
        dayNumber = Self.floorDivide(instant + Int64(utcOffset), 86_400)
    }

    /// The day with this proleptic Gregorian date.
    public init(year: Int, month: Int, day: Int) {
        dayNumber = Self.daysFromCivil(Int64(year), Int64(month), Int64(day))
    }

    /// Year, month (1–12) and day (1–31).
    public var date: (year: Int, month: Int, day: Int) {
        let (y, m, d) = Self.civil(fromDays: dayNumber)
        return (Int(y), Int(m), Int(d))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    public static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Year, month and day of a day number (Howard Hinnant's civil_from_days).
    public static func civil(fromDays dayNumber: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = dayNumber + 719_468
        let era = floorDivide(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days in a month of the proleptic Gregorian calendar.
    public static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
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

    /// Parses `YYYY-MM-DD`; nil for anything else, including days that do not exist (2023-02-30).
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), d >= 1, Int64(d) <= Self.daysInMonth(Int64(y), Int64(m)) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public static func < (a: LocalDay, b: LocalDay) -> Bool { a.dayNumber < b.dayNumber }

    /// Division rounding towards negative infinity (days before 1970 are negative).
    @inlinable
    public static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
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
