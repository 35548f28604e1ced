/// Where the synthetic person is: Berlin with its DST rule, except for a trip to New York.
struct TimeZonePlan {
    /// Days since 1970 of the trip (inclusive start, exclusive end).
    let trip: Range<Int64>

    /// UTC offset in seconds at a UTC instant.
    func offset(at instant: Int64) -> Int32 {
        let day = Self.floorDiv(instant, 86_400)
        let year = Self.year(ofDay: day)
        let summerStart = Self.lastSunday(year: year, month: 3) * 86_400 + 3600  // 01:00 UTC
        let summerEnd = Self.lastSunday(year: year, month: 10) * 86_400 + 3600
        let summer = instant >= summerStart && instant < summerEnd
        // The trip is a set of New York local days, so it starts and ends at New York midnight.
        if trip.contains(Self.floorDiv(instant - 4 * 3600, 86_400)) {
            // New York: the US switches earlier and later, but the trip lies inside both summers.
            return summer ? -4 * 3600 : -5 * 3600
        }
        return summer ? 2 * 3600 : 3600
    }

    /// The UTC instant of a local wall-clock time on a local day.
    func instant(day: Int64, secondOfDay: Int64) -> Int64 {
        let guess = day * 86_400 + secondOfDay - Int64(offset(at: day * 86_400 + 43_200))
        return day * 86_400 + secondOfDay - Int64(offset(at: guess))
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

    static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        return era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    }

    static func civil(_ dayNumber: Int64) -> (Int64, Int64, Int64) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func year(ofDay day: Int64) -> Int64 { civil(day).0 }

    static func lastSunday(year: Int64, month: Int64) -> Int64 {
        var day = daysFromCivil(year, month + 1, 1) - 1
        // 1970-01-01 was a Thursday: weekday 0 = Sunday when (day + 4) % 7 == 0.
        while ((day % 7) + 11) % 7 != 0 { day -= 1 }
        return day
    }
}
