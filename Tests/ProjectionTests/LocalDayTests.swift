import HealthModel
import Testing
@testable import Projections

@Suite struct LocalDayTests {
    @Test func datesRoundTripAcrossCenturiesAndLeapDays() {
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2024, 12, 31), (1969, 12, 31), (2100, 3, 1), (1600, 2, 29)] {
            let day = LocalDay(year: y, month: m, day: d)
            #expect(day.date == (y, m, d))
        }
        #expect(LocalDay(year: 1970, month: 1, day: 1).dayNumber == 0)
        #expect(LocalDay(year: 2024, month: 3, day: 1).dayNumber - LocalDay(year: 2024, month: 2, day: 28).dayNumber == 2)
        #expect(LocalDay(year: 2024, month: 1, day: 5).description == "2024-01-05")
    }

    @Test func anInstantBelongsToTheDayOfItsOwnOffset() {
        // 2024-03-10T23:30:00-08:00 is 2024-03-11T07:30:00Z.
        let instant: Int64 = 1_710_142_200
        #expect(LocalDay(instant: instant, utcOffset: -8 * 3600).description == "2024-03-10")
        #expect(LocalDay(instant: instant, utcOffset: 0).description == "2024-03-11")
        #expect(LocalDay(instant: instant, utcOffset: 9 * 3600).description == "2024-03-11")
        #expect(LocalDay(instant: -1, utcOffset: 0).description == "1969-12-31")
    }

    @Test func aSampleCrossingMidnightIsSplitProRata() {
        // 23:00 to 01:00 local (UTC+2) on 2024-06-01/02: 1,200 steps, half each side.
        let start = LocalDay(year: 2024, month: 6, day: 1).startInstant(utcOffset: 7200) + 23 * 3600
        let parts = splitAcrossLocalDays(start: start, end: start + 7200, utcOffset: 7200, value: 1200)
        #expect(parts.map(\.day.description) == ["2024-06-01", "2024-06-02"])
        #expect(parts.map(\.value) == [600, 600])
        // Ending exactly at midnight stays on one day; an instant goes to its own day.
        #expect(splitAcrossLocalDays(start: start, end: start + 3600, utcOffset: 7200, value: 5).count == 1)
        #expect(splitAcrossLocalDays(start: start, end: start, utcOffset: 7200, value: 5).map(\.value) == [5])
    }

    @Test func aMultiDaySampleSpreadsOverEveryDayItTouches() {
        let start = LocalDay(year: 2024, month: 1, day: 1).startInstant(utcOffset: 0) + 12 * 3600
        let parts = splitAcrossLocalDays(start: start, end: start + 2 * 86_400, utcOffset: 0, value: 4)
        #expect(parts.map(\.value) == [1, 2, 1])
        #expect(parts.reduce(0) { $0 + $1.value } == 4)
    }
}
