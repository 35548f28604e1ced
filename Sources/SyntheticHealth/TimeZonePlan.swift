import HealthModel

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
            // New York keeps US rules: second Sunday of March to first Sunday of November, 02:00 local.
            let usStart = (Self.firstSunday(year: year, month: 3) + 7) * 86_400 + 7 * 3600
            let usEnd = Self.firstSunday(year: year, month: 11) * 86_400 + 6 * 3600
            return instant >= usStart && instant < usEnd ? -4 * 3600 : -5 * 3600
        }
        return summer ? 2 * 3600 : 3600
    }

    /// The UTC instant of a local wall-clock time on a local day.
    func instant(day: Int64, secondOfDay: Int64) -> Int64 {
        let guess = day * 86_400 + secondOfDay - Int64(offset(at: day * 86_400 + 43_200))
        return day * 86_400 + secondOfDay - Int64(offset(at: guess))
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { LocalDay.floorDivide(a, b) }

    static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 { LocalDay.daysFromCivil(year, month, day) }

    static func civil(_ dayNumber: Int64) -> (Int64, Int64, Int64) { LocalDay.civil(fromDays: dayNumber) }

    static func year(ofDay day: Int64) -> Int64 { civil(day).0 }

    static func firstSunday(year: Int64, month: Int64) -> Int64 {
        var day = daysFromCivil(year, month, 1)
        while ((day % 7) + 11) % 7 != 0 { day += 1 }
        return day
    }

    static func lastSunday(year: Int64, month: Int64) -> Int64 {
        var day = daysFromCivil(year, month + 1, 1) - 1
        // 1970-01-01 was a Thursday: weekday 0 = Sunday when (day + 4) % 7 == 0.
        while ((day % 7) + 11) % 7 != 0 { day -= 1 }
        return day
    }
}
