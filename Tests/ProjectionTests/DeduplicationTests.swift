import HealthModel
import TestSupport
import Testing
@testable import Projections

/// Totals of cumulative metrics count each span of time once, from the best source.
@Suite struct DeduplicationTests {
    /// The Watch counts 10 steps a minute from 08:00 to 12:00 but was off 09:05–10:05; the iPhone,
    /// in the pocket all morning, counts 9 a minute in 15-minute samples. The Health app shows the
    /// Watch's 1,800 plus the iPhone's 540 for the hour the Watch missed (its 09:00–09:15 and
    /// 10:00–10:15 samples count pro rata: 10 and 5 minutes of them).
    @Test func theWatchCountsWhereItWasWornAndThePhoneFillsTheGap() throws {
        let models = try ReadModels()
        var inputs = Build.spread(source: Build.watch, day: d0, from: (8, 0), to: (9, 5), chunk: 10, perMinute: 10)
        inputs += Build.spread(source: Build.watch, day: d0, from: (10, 5), to: (12, 0), chunk: 10, perMinute: 10)
        inputs += Build.spread(source: Build.phone, day: d0, from: (8, 0), to: (12, 0), chunk: 15, perMinute: 9)
        let seed = TestSeed()
        var generator = seed.generator
        try models.feed(inputs.shuffled(using: &generator))
        let row = try #require(try models.summary(metric: Build.steps, by: .day).first)
        #expect(abs(row.value - 2_340) < 1e-6, "\(seed)")
        #expect(row.value != 1_800 + 2_160)  // the double count other tools report
        #expect(row.value != 2_160)          // "maximum per day"
        #expect(row.samples == inputs.count)
    }

    @Test func theDeviceModelRanksASourceNotItsName() throws {
        // A Watch the user named "iPhone" still counts first.
        let models = try ReadModels()
        let oddlyNamedWatch = SourceKey(name: "iPhone", deviceClass: .watch)
        let phone = SourceKey(name: "My Watch", deviceClass: .phone)
        var inputs = Build.spread(source: oddlyNamedWatch, day: d0, from: (8, 0), to: (9, 0), chunk: 5, perMinute: 10)
        inputs += Build.spread(source: phone, day: d0, from: (8, 0), to: (9, 0), chunk: 5, perMinute: 7)
        try models.feed(inputs)
        #expect(abs(try models.dayTotals()[d0.description]! - 600) < 1e-6)
        #expect(try models.sources().map(\.key) == [oddlyNamedWatch, phone])
    }

    @Test func aSourceOrderChangeRecomputesEveryDay() throws {
        let models = try ReadModels()
        var inputs = Build.spread(source: Build.watch, day: d0, from: (8, 0), to: (9, 0), chunk: 10, perMinute: 10)
        inputs += Build.spread(source: Build.phone, day: d0, from: (8, 30), to: (10, 0), chunk: 15, perMinute: 9)
        try models.feed(inputs)
        #expect(abs(try models.dayTotals()[d0.description]! - (600 + 540)) < 1e-6)
        try models.feed([.sourceOrder([Build.phone])], position: [2])
        #expect(abs(try models.dayTotals()[d0.description]! - (300 + 810)) < 1e-6)
        #expect(try models.sources().first?.key == Build.phone && models.sources().first?.ordered == true)
        try models.feed([.sourceOrder([])], position: [3])
        #expect(abs(try models.dayTotals()[d0.description]! - 1_140) < 1e-6)
    }

    @Test func oneSourceOverlappingItselfIsNotDeduplicated() throws {
        // Two samples of the same source over the same span are two things (two apps' merges were
        // already removed at import); only overlaps between sources are resolved.
        let models = try ReadModels()
        let a = Build.instant(d0, 8)
        try models.feed([Build.sample(start: a, end: a + 600, offset: 0, value: 100),
                         Build.sample(start: a + 300, end: a + 900, offset: 0, value: 50)])
        #expect(abs(try models.dayTotals()[d0.description]! - 150) < 1e-6)
    }

    @Test func discreteMetricsAverageWithMinAndMax() throws {
        let models = try ReadModels()
        let readings: [Double] = [58, 61, 140, 72]
        try models.feed(readings.enumerated().map { i, bpm in
            .discrete(DiscreteSample(metric: Build.heartRate, unit: "count/min", start: Build.instant(d0, 9 + i), utcOffset: 0, value: bpm))
        })
        let row = try #require(try models.summary(metric: Build.heartRate, by: .day).first)
        #expect(row.value == 82.75 && row.min == 58 && row.max == 140 && row.samples == 4 && row.unit == "count/min")
    }
}
