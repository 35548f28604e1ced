import HealthModel
import Testing
@testable import Projections

/// An app's rewritten copies of a sample (identical but for their creation date) count once;
/// distinct samples that happen to be equal in value and time do not.
@Suite struct RewrittenCopiesTests {
    static let energy = "HKQuantityTypeIdentifierActiveEnergyBurned"
    static let app = SourceKey(name: "Pacer", deviceClass: .phone)

    /// A 15-minute energy sample of 42.5 kcal at 08:00, created `createdAfter` seconds after its
    /// end, with metadata `digest`.
    static func copy(createdAfter: Int64?, digest: UInt32 = 0, value: Double = 42.5, hour: Int = 8) -> ProjectionInput {
        let start = Build.instant(d0, hour)
        return .cumulative(CumulativeSample(metric: energy, unit: "kcal", source: app, start: start, end: start + 900, utcOffset: 0,
                                           value: value, metadataDigest: digest, created: createdAfter.map { start + 900 + $0 }))
    }

    @Test func seventeenCopiesASecondApartCountOnce() throws {
        let models = try ReadModels()
        let copies = (0..<17).map { Self.copy(createdAfter: Int64($0)) }
        try models.feed(copies + [Self.copy(createdAfter: 5, hour: 9)])
        #expect(try models.dayTotals(Self.energy) == [d0.description: 85])
        #expect(models.rewritesInLastUpdate == 16)
        // Every copy is still held: the day's sample count is what the log holds.
        #expect(try models.summary(metric: Self.energy, by: .day).map(\.samples) == [18])
    }

    @Test func copiesArrivingInLaterUpdatesCountOnceAndAreCountedAsTheyCome() throws {
        let models = try ReadModels()
        try models.feed([Self.copy(createdAfter: 0)], position: [1])
        #expect(models.rewritesInLastUpdate == 0)
        try models.feed([Self.copy(createdAfter: 1), Self.copy(createdAfter: 2)], position: [2])
        #expect(models.rewritesInLastUpdate == 2)
        #expect(try models.dayTotals(Self.energy) == [d0.description: 42.5])
    }

    @Test func twoGlassesLoggedAtOnceStayTwoAndStayTwoWhenRewritten() throws {
        // Identical to the creation date: two records (IdentitySet keeps both).
        let models = try ReadModels()
        try models.feed([Self.copy(createdAfter: 3), Self.copy(createdAfter: 3)])
        #expect(try models.dayTotals(Self.energy) == [d0.description: 85])
        #expect(models.rewritesInLastUpdate == 0)
        // The app writes both again a minute later: still two.
        try models.feed([Self.copy(createdAfter: 63), Self.copy(createdAfter: 63)], position: [2])
        #expect(try models.dayTotals(Self.energy) == [d0.description: 85])
        #expect(models.rewritesInLastUpdate == 2)
    }

    /// Parts of two different samples of one source that cover the same stretch at the same rate
    /// (after midnight, or in an hour both cover whole) are not copies of one sample: both count.
    @Test func partsOfDifferentSamplesCoveringTheSameStretchBothCount() throws {
        let models = try ReadModels()
        let ten = Build.instant(d0, 22), eleven = Build.instant(d0, 23)
        // 22:00–02:00 at one a minute, and 23:00–02:00 at one a minute, created apart.
        try models.feed([.cumulative(CumulativeSample(metric: Self.energy, unit: "kcal", source: Self.app, start: ten, end: ten + 4 * 3600,
                                                      utcOffset: 0, value: 240, created: ten + 5 * 3600)),
                         .cumulative(CumulativeSample(metric: Self.energy, unit: "kcal", source: Self.app, start: eleven, end: eleven + 3 * 3600,
                                                      utcOffset: 0, value: 180, created: ten + 5 * 3600 + 1))])
        let next = LocalDay(dayNumber: d0.dayNumber + 1)
        #expect(try models.dayTotals(Self.energy) == [d0.description: 120 + 60, next.description: 120 + 120])
        #expect(models.rewritesInLastUpdate == 0)
        // By the hour (hourly bundles): 06:00–09:00 and 07:00–09:00 at one a minute, both count
        // in 08:00–09:00.
        var hourly = HourlyAggregator { _ in 0 }
        let six = Build.instant(d0, 6), seven = Build.instant(d0, 7)
        hourly.add(.cumulative(CumulativeSample(metric: Self.energy, unit: "kcal", source: Self.app, start: six, end: six + 3 * 3600,
                                                utcOffset: 0, value: 180, created: six + 4 * 3600)))
        hourly.add(.cumulative(CumulativeSample(metric: Self.energy, unit: "kcal", source: Self.app, start: seven, end: seven + 2 * 3600,
                                                utcOffset: 0, value: 120, created: six + 4 * 3600 + 1)))
        #expect(hourly.rows().map(\.value) == [60, 120, 120])
        // The same sample rewritten across midnight still counts once on each day.
        try models.feed([.cumulative(CumulativeSample(metric: Self.energy, unit: "kcal", source: Self.app, start: ten, end: ten + 4 * 3600,
                                                      utcOffset: 0, value: 240, created: ten + 6 * 3600))], position: [2])
        #expect(try models.dayTotals(Self.energy) == [d0.description: 180, next.description: 240])
        #expect(models.rewritesInLastUpdate == 1)
    }

    @Test func distinctMetadataAmongEqualsKeepsSamplesApart() throws {
        let models = try ReadModels()
        // Two foods of equal energy at the same time differ in metadata: both count.
        try models.feed([Self.copy(createdAfter: 0, digest: MetadataDigest.of([MetadataEntry(key: "HKFoodType", value: "Apple")])),
                         Self.copy(createdAfter: 1, digest: MetadataDigest.of([MetadataEntry(key: "HKFoodType", value: "Pear")]))])
        #expect(try models.dayTotals(Self.energy) == [d0.description: 85])
        #expect(models.rewritesInLastUpdate == 0)
    }

    @Test func aCopyWithoutACreationDateIsACopyOfOneWithIt() throws {
        let models = try ReadModels()
        try models.feed([Self.copy(createdAfter: nil), Self.copy(createdAfter: 10)])
        #expect(try models.dayTotals(Self.energy) == [d0.description: 42.5])
        #expect(models.rewritesInLastUpdate == 1)
    }

    @Test func copiesAcrossMidnightCountOnceOnBothDaysAndOnceInTheCount() throws {
        let models = try ReadModels()
        let start = Build.instant(d0, 23, 30)
        func sample(_ created: Int64) -> ProjectionInput {
            .cumulative(CumulativeSample(metric: Self.energy, unit: "kcal", source: Self.app, start: start, end: start + 3600,
                                         utcOffset: 0, value: 60, created: start + 3600 + created))
        }
        try models.feed([sample(0), sample(1), sample(2)])
        let next = LocalDay(dayNumber: d0.dayNumber + 1)
        #expect(try models.dayTotals(Self.energy) == [d0.description: 30, next.description: 30])
        #expect(models.rewritesInLastUpdate == 2)
    }

    @Test func theMetadataDigestIgnoresOrderAndTellsEntriesApart() {
        let a = MetadataEntry(key: "HKFoodType", value: "Apple"), b = MetadataEntry(key: "HKWasUserEntered", value: "1")
        #expect(MetadataDigest.of([a, b]) == MetadataDigest.of([b, a]))
        #expect(MetadataDigest.of([a]) != MetadataDigest.of([b]))
        #expect(MetadataDigest.of([MetadataEntry(key: "ab", value: "c")]) != MetadataDigest.of([MetadataEntry(key: "a", value: "bc")]))
        #expect(MetadataDigest.of([]) == 0)
        #expect(MetadataDigest.of([a]) != 0)
    }

    @Test func theStoredDayKeepsDigestAndCreationThroughItsEncoding() throws {
        let intervals = [Interval(start: 100, end: 1000, value: 42.5, source: 3, metadataDigest: 0xDEAD_BEEF, creation: -7),
                         Interval(start: 100, end: 1000, value: 42.5, source: 3, creation: Int32.max),
                         Interval(start: 100, end: 1000, value: 42.5, source: 3, metadataDigest: UInt32.max, creation: Int32.min + 1),
                         Interval(start: 2000, end: 2000, value: 1, source: 1, daysAfterOrigin: 2)]
        var decoded: [Interval] = []
        try IntervalBlob.decode(IntervalBlob.encode(intervals), into: &decoded)
        #expect(decoded == intervals)
    }
}
