import HealthModel
import Testing
@testable import Projections

/// Samples land on the calendar day of their own timestamp in the offset they were recorded in.
@Suite struct LocalDayAssignmentTests {
    @Test func aSampleCrossingMidnightIsSplitProRata() throws {
        let models = try ReadModels()
        let start = Build.instant(d0, 23, 30, offset: 2)
        try models.feed([Build.sample(start: start, end: start + 3600, offset: 2, value: 120)])
        let next = LocalDay(dayNumber: d0.dayNumber + 1)
        #expect(try models.dayTotals() == [d0.description: 60, next.description: 60])
    }

    /// Berlin, 31 March 2024: clocks jump from 02:00 (+01:00) to 03:00 (+02:00), a 23-hour day.
    @Test func theDSTDayKeepsItsLocalSamplesAndHours() throws {
        let models = try ReadModels()
        let dst = LocalDay(year: 2024, month: 3, day: 31)
        let before = LocalDay(dayNumber: dst.dayNumber - 1)
        let lateSaturday = Build.instant(before, 23, 30, offset: 1)
        let earlySunday = Build.instant(dst, 1, 30, offset: 1)
        let lateSunday = Build.instant(dst, 23, 10, offset: 2)  // 21:10 UTC
        try models.feed([
            Build.sample(start: lateSaturday, end: lateSaturday + 600, offset: 1, value: 10),
            Build.sample(start: earlySunday, end: earlySunday + 600, offset: 1, value: 20),
            Build.sample(start: lateSunday, end: lateSunday + 600, offset: 2, value: 40),
            // Stand hours on both sides of the jump and in the last hour of the day.
            .standHour(start: Build.instant(dst, 1, offset: 1), utcOffset: 3600, stood: true),
            .standHour(start: Build.instant(dst, 3, offset: 2), utcOffset: 7200, stood: true),
            .standHour(start: Build.instant(dst, 23, offset: 2), utcOffset: 7200, stood: true),
            .standHour(start: Build.instant(dst, 22, offset: 2), utcOffset: 7200, stood: false),
        ])
        #expect(try models.dayTotals() == [before.description: 10, dst.description: 60])
        #expect(try models.rings().map(\.stand) == [3])
        #expect(try models.rings().map(\.day) == [dst])
    }

    /// Berlin to New York on 10 June: the evening in New York is still the 10th, though it is
    /// the 11th in UTC and in Berlin.
    @Test func aTravelDayFollowsTheOffsetOfEachSample() throws {
        let models = try ReadModels()
        let day = LocalDay(year: 2024, month: 6, day: 10)
        let berlinMorning = Build.instant(day, 8, offset: 2)
        let newYorkNight = Build.instant(day, 23, 30, offset: -4)  // 03:30 UTC on the 11th
        let newYorkNextMorning = Build.instant(LocalDay(dayNumber: day.dayNumber + 1), 7, offset: -4)
        try models.feed([
            Build.sample(start: berlinMorning, end: berlinMorning + 600, offset: 2, value: 100),
            Build.sample(start: newYorkNight, end: newYorkNight + 600, offset: -4, value: 30),
            Build.sample(start: newYorkNextMorning, end: newYorkNextMorning + 600, offset: -4, value: 5),
        ])
        #expect(try models.dayTotals() == [day.description: 130, "2024-06-11": 5])
    }

    @Test func overlapAcrossOffsetsIsStillOneSpanOfTime() throws {
        // The same walk recorded by the Watch in +02:00 and by the phone already in -04:00 (it
        // switched time zone first) is one span of real time: counted once.
        let models = try ReadModels()
        let start = Build.instant(d0, 12, offset: 2)
        try models.feed([
            Build.sample(source: Build.watch, start: start, end: start + 1200, offset: 2, value: 200),
            Build.sample(source: Build.phone, start: start, end: start + 1200, offset: -4, value: 180),
        ])
        #expect(try models.dayTotals() == [d0.description: 200])
    }

    @Test func weeksAreISOWeeksAndMonthsCalendarMonths() throws {
        let models = try ReadModels()
        // Sunday 31 Dec 2023 is in 2023-W52; Monday 1 Jan 2024 starts 2024-W01; 30 Dec 2024 is in 2025-W01.
        let days = [LocalDay(year: 2023, month: 12, day: 31), LocalDay(year: 2024, month: 1, day: 1),
                    LocalDay(year: 2024, month: 1, day: 7), LocalDay(year: 2024, month: 12, day: 30)]
        try models.feed(days.map { day in
            let t = Build.instant(day, 10)
            return Build.sample(start: t, end: t + 60, offset: 0, value: 10)
        })
        let weeks = try models.summary(metric: Build.steps, by: .week).map { "\($0.period)=\($0.value)" }
        #expect(weeks == ["2023-W52=10.0", "2024-W01=20.0", "2025-W01=10.0"])
        let months = try models.summary(metric: Build.steps, by: .month).map(\.period)
        #expect(months == ["2023-12", "2024-01", "2024-12"])
    }
}
