import Foundation
@testable import HealthModel
import Projections
import Testing
@testable import Vault
import VaultTestSupport

/// Yappi's upsert rule for companion JSON (files here; posts in CompanionServerTests): one live
/// value per metric, source and time range. Summaries, rebuilds, bundles and erasure all see the
/// latest value only.
@Suite struct CompanionUpsertTests {
    static let utc = TimeZone(identifier: "UTC")!

    func post(_ t: ImportTestVault, _ name: String, _ metric: String, _ entries: [(String, Double)]) throws -> ImportReport {
        let data = entries.map { #"{"timeRange":"\#($0.0)","value":\#($0.1)}"# }.joined(separator: ",")
        return try t.vault.importFiles([t.write(name, #"{"metric":"\#(metric)","data":[\#(data)]}"#)], timeZone: Self.utc)
    }

    func day(_ t: ImportTestVault, _ metric: String) throws -> SummaryRow? {
        try t.vault.summary(metric: metric, by: .day, from: LocalDay(year: 2025, month: 8, day: 6), to: LocalDay(year: 2025, month: 8, day: 6)).first
    }

    /// A replaced value's frame is kept in memory for the next replacement; an erasure of its key
    /// lets it go, so that nothing of an erased month is served from memory afterwards.
    @Test func theFrameKeptForReplacementsGoesWithAnErasure() throws {
        let t = try ImportTestVault()
        _ = try post(t, "a.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)])
        _ = try post(t, "b.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)])
        let key = try #require(t.vault.log.dataKeys.first { String(decoding: $0.label, as: UTF8.self) == "activity/2025-08" })
        let frame = try #require(t.vault.log.frameSummaries().first { $0.keyID == key.id })
        #expect(try t.vault.tables.event(keyID: key.id, index: frame.firstEventIndex) != nil)
        _ = try t.vault.erase(categories: [.activity])
        #expect((try? t.vault.tables.event(keyID: key.id, index: frame.firstEventIndex)) == nil)
    }

    @Test func aNewValueForTheSameRangeReplacesTheOldOneAndTheSameValueIsADuplicate() throws {
        let t = try ImportTestVault()
        let first = try post(t, "a.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)])
        #expect((first.added, first.replaced, first.duplicates) == (1, 0, 0))
        let second = try post(t, "b.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)])
        #expect((second.added, second.replaced, second.duplicates) == (0, 1, 0))
        #expect(try day(t, "steps")?.value == 52)
        #expect(try day(t, "steps")?.samples == 1)
        let again = try post(t, "c.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)])
        #expect((again.added, again.replaced, again.duplicates) == (0, 0, 1))
        // Back to the first value: a replacement again, not a duplicate of the replaced sample.
        let back = try post(t, "d.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)])
        #expect((back.added, back.replaced, back.duplicates) == (0, 1, 0))
        #expect(try day(t, "steps")?.value == 38)
        // The rebuilt read models agree: the supersessions are events.
        #expect(try t.vault.sources().map(\.samples) == [1])
        try t.vault.rebuildProjections()
        #expect(try day(t, "steps")?.value == 38)
        #expect(try t.vault.heldTypes().first { $0.type == "HKQuantityTypeIdentifierStepCount" }?.count == 1)
        #expect(try t.vault.sources().map(\.samples) == [1])
    }

    @Test func aRekeyThatRenumbersTheLogKeepsTheReplacedValuesOutOfBundles() throws {
        let directory: TemporaryDirectory
        do {
            let t = try ImportTestVault()
            directory = t.dir
            _ = try post(t, "a.json", "STEPS", [("2025-07-06 08:00/2025-07-06 09:00", 3), ("2025-08-06 08:00/2025-08-06 09:00", 38),
                                                ("2025-08-06 09:00/2025-08-06 10:00", 7)])
            _ = try post(t, "b.json", "HEART_RATE", [("2025-08-06 08:00/2025-08-06 09:00", 60)])
            _ = try post(t, "c.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)])
            // An erased month leaves the re-keyed log without its events: every later index moves.
            _ = try t.vault.erase(categories: [.activity], from: LocalMonth(year: 2025, month: 7), to: LocalMonth(year: 2025, month: 7))
        }
        try Vault.rekey(at: directory.path + "/v", from: passphrase("p"), to: passphrase("p2"))
        let t = try ImportTestVault(reopening: directory, passphrase: "p2")
        #expect(try day(t, "steps")?.value == 59)
        let shared = try SharedLines(t)
        let lines = try shared.export([.activity], from: nil, to: nil).lines(.activity)
        #expect(lines.compactMap { $0["value"] as? Double }.sorted() == [7, 52])
    }

    @Test func aReplacementKeepsItsSupersessionWhenTheTableForgetsBeforeTheCommit() throws {
        let t = try ImportTestVault()
        _ = try post(t, "a.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38), ("2025-09-06 08:00/2025-09-06 09:00", 5)])
        t.vault.importRevisionBudget = 0
        // August's value is replaced, then September's month is read: the table forgets August first.
        let report = try post(t, "b.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52), ("2025-09-06 08:00/2025-09-06 09:00", 6)])
        #expect((report.added, report.replaced) == (0, 2))
        #expect(try day(t, "steps")?.value == 52)
        try t.vault.rebuildProjections()
        #expect(try day(t, "steps")?.value == 52)
    }

    /// Posts named newest first in one command (issue 36: `import post2.json post1.json` ended at
    /// the older value): read oldest first by modification time, so the newest value stays; the
    /// audit trail counts what was replaced.
    @Test func postsNamedInAnyOrderEndAtTheNewestValueAndTheAuditTrailCountsTheReplacement() throws {
        let t = try ImportTestVault()
        let older = t.write("post1.json", #"{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38}]}"#)
        let newer = t.write("post2.json", #"{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":52}]}"#)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_754_460_000)], ofItemAtPath: older)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_754_463_600)], ofItemAtPath: newer)
        let report = try t.vault.importFiles([newer, older], timeZone: Self.utc)
        #expect(report.files.map(\.path) == [older, newer] && report.replaced == 1)
        #expect(try day(t, "steps")?.value == 52)
        let imports = try t.vault.history().compactMap { if case .importRecorded(_, let r) = $0.event { r } else { nil } }
        #expect(imports.map(\.replaced) == [0, 1] && imports.map(\.file) == ["post1.json", "post2.json"])
    }

    @Test func twoValuesForOneRangeInOneFileKeepTheLast() throws {
        let t = try ImportTestVault()
        let report = try post(t, "a.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38), ("2025-08-06 08:00/2025-08-06 09:00", 41),
                                                     ("2025-08-06 09:00/2025-08-06 10:00", 5), ("2025-08-06 09:00/2025-08-06 10:00", 5)])
        #expect((report.added, report.replaced, report.duplicates) == (2, 1, 1))
        #expect(try day(t, "steps")?.value == 46)
    }

    @Test func aDiscreteMetricsDayLeavesTheReplacedReadingOutOfItsAverageAndBounds() throws {
        let t = try ImportTestVault()
        _ = try post(t, "a.json", "HEART_RATE", [("2025-08-06 08:00/2025-08-06 09:00", 60), ("2025-08-06 09:00/2025-08-06 10:00", 90)])
        #expect(try day(t, "heart-rate").map { [$0.value, $0.min, $0.max] } == [75, 60, 90])
        // The day's maximum is replaced by a lower reading: the bound comes down with it.
        _ = try post(t, "b.json", "HEART_RATE", [("2025-08-06 09:00/2025-08-06 10:00", 70)])
        let row = try #require(try day(t, "heart-rate"))
        #expect([row.value, row.min, row.max] == [65, 60, 70])
        #expect(row.samples == 2)
        try t.vault.rebuildProjections()
        #expect(try day(t, "heart-rate").map { [$0.value, $0.min, $0.max, Double($0.samples)] } == [65, 60, 70, 2])
    }

    @Test func bundlesHoldOnlyTheLatestValue() throws {
        let t = try ImportTestVault()
        _ = try post(t, "a.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38), ("2025-08-06 09:00/2025-08-06 10:00", 7)])
        _ = try post(t, "b.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)])
        let shared = try SharedLines(t)
        let lines = try shared.export([.activity], from: nil, to: nil).lines(.activity)
        #expect(lines.map { $0["value"] as? Double }.sorted { ($0 ?? 0) < ($1 ?? 0) } == [7, 52])
    }

    @Test func erasingTheMonthRemovesTheReplacementsAsARebuildWould() throws {
        let t = try ImportTestVault()
        _ = try post(t, "a.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38), ("2025-07-06 08:00/2025-07-06 09:00", 3)])
        _ = try post(t, "b.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)])
        _ = try t.vault.erase(categories: [.activity], from: LocalMonth(year: 2025, month: 8), to: LocalMonth(year: 2025, month: 8))
        #expect(try day(t, "steps") == nil)
        let kept = try t.vault.summary(metric: "steps", by: .month)
        try t.vault.rebuildProjections()
        #expect(try t.vault.summary(metric: "steps", by: .month) == kept)
        #expect(kept.map(\.value) == [3])
        // Importing the erased month's old value again is refused, not a replacement.
        let again = try post(t, "c.json", "STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 60)])
        #expect((again.added, again.replaced, again.erased) == (0, 0, 1))
    }

    @Test func exportFilesOfOtherFormatsKeepTheMultisetRule() throws {
        let t = try ImportTestVault()
        let csv = """
            type,start,end,value,unit,source
            HKQuantityTypeIdentifierStepCount,2025-08-06T08:00:00+00:00,2025-08-06T09:00:00+00:00,38,count,Phone
            HKQuantityTypeIdentifierStepCount,2025-08-06T08:00:00+00:00,2025-08-06T09:00:00+00:00,52,count,Phone

            """
        let report = try t.vault.importFiles([t.write("a.csv", csv)], timeZone: Self.utc)
        #expect((report.added, report.replaced) == (2, 0))
        #expect(try day(t, "steps")?.value == 90)
    }

    /// The server answers a post with `CompanionPostOutcome.json`, written by hand: the same bytes
    /// as `JSONEncoder` with sorted keys, which it replaced.
    @Test func theOutcomesJSONIsWhatJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for outcome in [CompanionPostOutcome(), CompanionPostOutcome(added: 24, replaced: 3, duplicates: 120, rejected: 1, erased: 7),
                        CompanionPostOutcome(added: Int.max, replaced: 0, duplicates: 0, rejected: 99_999, erased: 0)] {
            #expect(outcome.json == String(decoding: try encoder.encode(outcome), as: UTF8.self))
        }
    }
}
