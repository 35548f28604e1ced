import EventLog
import Foundation
@testable import HealthModel
import Projections
import SyntheticHealth
import Testing
import VaultTestSupport
import TestSupport
@testable import Vault

/// The read models as the vault keeps them: fed from the log, sealed at rest, caught up on open.
@Suite struct VaultProjectionTests {
    final class Fixture {
        let dir = TemporaryDirectory("projections")
        var path: String { dir.path + "/vault" }

        func passphrase() -> Passphrase { TestSupport.passphrase("correct horse") }

        func create() throws -> Vault {
            try makeVault(at: path, passphrase: "correct horse")
        }

        func open(_ mode: EventLog.AccessMode = .readWrite) throws -> Vault {
            try Vault.open(at: path, passphrase: passphrase(), mode: mode)
        }

        func export(days: Int, firstDay: (Int, Int, Int) = (2024, 3, 20), tripStart: Int = 5, name: String = "export.zip") throws -> (String, SyntheticExport.Summary) {
            let zip = dir.path + "/" + name
            let summary = try SyntheticExport.writeZip(to: zip, options: .init(days: days, firstDay: firstDay, tripStart: tripStart))
            return (zip, summary)
        }
    }

    /// Everything the read models answer, as comparable lines.
    static func answers(_ vault: Vault) throws -> [String] {
        let metrics = try ["steps", "active-energy", "heart-rate", "distance", "exercise-time"].map(Vault.metricIdentifier)
        return try readModelAnswers(try vault.projections(), metrics: metrics)
    }

    /// 40 generated days over the DST switch with a trip to New York: every computed ring equals
    /// the export's ActivitySummary and every day's steps equal the Health app's figure.
    @Test func ringsAndStepsMatchTheHealthApp() throws {
        let f = Fixture()
        let vault = try f.create()
        let (zip, summary) = try f.export(days: 40)
        _ = try vault.importFiles([zip])
        let rings = try vault.rings()
        #expect(rings.count == 40)
        for day in rings {
            let truth = try #require(summary.days[day.day.dayNumber], "\(day.day)")
            let apple = try #require(day.apple, "\(day.day)")
            #expect(abs(day.move - apple.move!) <= 0.5, "\(day.day)")
            #expect(day.exercise.rounded() == apple.exercise! && Double(day.stand) == apple.stand!, "\(day.day)")
            #expect(abs(day.move - truth.activeEnergy) <= 0.5 && Int(day.exercise.rounded()) == truth.exerciseMinutes
                    && day.stand == truth.standHours && day.moveGoal == Double(truth.moveGoal), "\(day.day)")
        }
        let steps = try vault.summary(metric: "steps", by: .day)
        #expect(steps.count == summary.days.count)
        for row in steps {
            let day = try #require(LocalDay(parsing: row.period))
            #expect(Int(row.value.rounded()) == summary.days[day.dayNumber]?.steps, "\(row.period)")
        }
    }

    @Test func rebuildGivesExactlyTheIncrementalResult() throws {
        let f = Fixture()
        let (early, _) = try f.export(days: 15, name: "early.zip")
        let (later, _) = try f.export(days: 30, name: "later.zip")
        do {
            let vault = try f.create()
            _ = try vault.importFiles([early])
            _ = try vault.projections()
            try vault.setGoal(.move, value: 700, from: LocalDay(year: 2024, month: 3, day: 25))
            _ = try vault.importFiles([later])   // the first 15 days again: only the rest is new
            _ = try vault.projections()
            try vault.setSourceOrder(names: ["Alex’s iPhone"])
            try vault.setGoal(.stand, value: 10, from: LocalDay(year: 2024, month: 4, day: 2))
        }
        let vault = try f.open()
        let incremental = try Self.answers(vault)
        #expect(vault.projectionNotice == nil)
        let rebuild = try vault.rebuildProjections()
        // The rebuild replayed every event of the log, as verify counts them reading it itself.
        #expect(rebuild.events == (try Vault.verify(at: f.path, passphrase: f.passphrase())).events)
        #expect(firstDifference(try Self.answers(vault), incremental) == nil)
        #expect(firstDifference(try Self.answers(try f.open(.readOnly)), incremental) == nil)
    }

    /// The log commits first; the read models follow. A crash in between (here: appends with no
    /// projection update, the process gone) is caught up on the next open, each event once.
    @Test func aCrashBetweenLogAppendAndProjectionUpdateIsCaughtUpOnce() throws {
        let f = Fixture()
        do {
            let vault = try f.create()
            let (zip, _) = try f.export(days: 12, name: "a.zip")
            _ = try vault.importFiles([zip])
            _ = try vault.projections()
        }
        let stored = f.path + "/" + Vault.projectionsFileName
        let imageBefore = try Data(contentsOf: URL(fileURLWithPath: stored))

        // Appended and acknowledged, but the process "dies" before the read models are updated.
        let (more, _) = try f.export(days: 20, name: "b.zip")
        do {
            // An import feeds the read models in a transaction committed after the log's: the
            // process "dies" in between (the feed is off, so that commit never comes).
            let vault = try f.open()
            vault.feedsReadModelsDuringImport = false
            _ = try vault.importFiles([more])
        }
        do { _ = try f.open().append([.goalSet(GoalSetting(at: Date(), ring: .exercise, value: DecimalValue(double: 45),
                                                  from: LocalDay(year: 2024, month: 3, day: 30)))]) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == imageBefore)

        let reopened = try f.open(.readOnly)
        let caughtUp = try Self.answers(reopened)
        #expect(reopened.projectionNotice == nil)   // caught up from its position, not rebuilt
        #expect(try reopened.rings().count == 20)
        #expect(try reopened.rings().last?.exerciseGoal == 45)
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) != imageBefore)
        // Opening again reads the image written by the catch-up: same answers, nothing applied twice.
        #expect(firstDifference(try Self.answers(try f.open(.readOnly)), caughtUp) == nil)
        _ = try reopened.rebuildProjections()
        #expect(firstDifference(try Self.answers(reopened), caughtUp) == nil)
    }

    @Test func aDamagedOrForeignImageIsRebuiltFromTheLogAndSaysSo() throws {
        let f = Fixture()
        let expected: [String]
        do {
            let vault = try f.create()
            _ = try vault.importFiles([try f.export(days: 6).0])
            expected = try Self.answers(vault)
        }
        let stored = f.path + "/" + Vault.projectionsFileName
        let pristine = try Data(contentsOf: URL(fileURLWithPath: stored))
        // One bit in the first page (read by every open), then one in every later page (met by
        // the first query that reads one).
        let block = 4096 + 44
        for offsets in [[64 + 200], Array(stride(from: 64 + block + 300, to: pristine.count, by: block))] {
            var bytes = pristine
            for offset in offsets { bytes[offset] ^= 1 }
            try bytes.write(to: URL(fileURLWithPath: stored))
            let damaged = try f.open()
            #expect(firstDifference(try Self.answers(damaged), expected) == nil)
            #expect(damaged.projectionNotice?.contains("rebuilt them from the log") == true)
        }

        // Another vault's image, even one that opens with the same passphrase, is not used.
        let other = Fixture()
        let otherVault = try other.create()
        _ = try otherVault.importFiles([try other.export(days: 3).0])
        _ = try otherVault.projections()
        try FileManager.default.removeItem(atPath: stored)
        try FileManager.default.copyItem(atPath: other.path + "/" + Vault.projectionsFileName, toPath: stored)
        let foreign = try f.open()
        #expect(firstDifference(try Self.answers(foreign), expected) == nil)
        #expect(foreign.projectionNotice != nil)
    }

    /// `workouts` adds up what the generator wrote: runs whose element has no totals, so energy
    /// and distance come from their statistics; by day, two weeks (ending on the range's last
    /// day) and month.
    @Test func workoutsMatchTheGeneratorsTruth() throws {
        let f = Fixture()
        let vault = try f.create()
        let (zip, summary) = try f.export(days: 30, firstDay: (2024, 3, 1))
        _ = try vault.importFiles([zip])
        let truth = summary.days.filter { $0.value.workouts > 0 }
        #expect(!truth.isEmpty)
        let byDay = try vault.workouts(by: .day)
        #expect(byDay.map(\.period) == truth.keys.sorted().map { LocalDay(dayNumber: $0).description })
        for row in byDay {
            let t = truth[LocalDay(parsing: row.period)!.dayNumber]!
            #expect(row.type == "HKWorkoutActivityTypeRunning" && row.count == t.workouts && row.minutes == Double(t.workoutMinutes), "\(row.period)")
            #expect(abs(row.energy - t.workoutEnergy) < 1e-6 && abs(row.distance - t.workoutDistance) < 1e-6, "\(row.period)")
        }
        // Two weeks back from 2024-03-30: 03-17..03-30, 03-03..03-16, and 02-18..03-02 holds the first two days.
        let end = LocalDay(year: 2024, month: 3, day: 30)
        // A day's fortnight worked out here, not by the code under test: whole 14-day steps back
        // from the range's last day.
        func fortnight(_ day: Int64) -> String {
            let last = end.dayNumber - (end.dayNumber - day) / 14 * 14
            return "\(LocalDay(dayNumber: last - 13))..\(LocalDay(dayNumber: last))"
        }
        #expect(truth.keys.allSatisfy { $0 <= end.dayNumber })
        let twoWeeks = try vault.workouts(by: .twoWeeks, to: end)
        #expect(twoWeeks.map(\.period) == ["2024-02-18..2024-03-02", "2024-03-03..2024-03-16", "2024-03-17..2024-03-30"]
            .filter { period in truth.keys.contains { fortnight($0) == period } })
        for row in twoWeeks {
            let days = truth.filter { fortnight($0.key) == row.period }.values
            #expect(row.count == days.map(\.workouts).reduce(0, +) && abs(row.energy - days.map(\.workoutEnergy).reduce(0, +)) < 1e-6)
        }
        #expect(try vault.workouts(by: .month).map(\.count) == [truth.values.map(\.workouts).reduce(0, +)])
    }

    @Test func twoWeekPeriodsEndOnTheRangesLastDay() {
        let end = LocalDay(year: 2024, month: 1, day: 14)
        #expect(SummaryPeriod.twoWeeks.key(of: LocalDay(year: 2024, month: 1, day: 1), rangeEnd: end) == "2024-01-01..2024-01-14")
        #expect(SummaryPeriod.twoWeeks.key(of: end, rangeEnd: end) == "2024-01-01..2024-01-14")
        #expect(SummaryPeriod.twoWeeks.key(of: LocalDay(year: 2023, month: 12, day: 31), rangeEnd: end) == "2023-12-18..2023-12-31")
        #expect(SummaryPeriod.twoWeeks.key(of: LocalDay(year: 2023, month: 12, day: 18), rangeEnd: end) == "2023-12-18..2023-12-31")
        #expect(SummaryPeriod.twoWeeks.key(of: LocalDay(year: 2023, month: 12, day: 17), rangeEnd: end) == "2023-12-04..2023-12-17")
    }

    /// Erasing a category's months removes exactly what their samples brought, in place: the
    /// read models after the erase answer what a rebuild from the log answers, with samples
    /// across a month's end and over several days, a source only erased samples named, discrete
    /// metrics, stand hours and Apple's summaries.
    @Test func anEraseRemovesExactlyWhatARebuildWouldNotHave() throws {
        let f = Fixture()
        let vault = try f.create()
        _ = try vault.importFiles([try f.export(days: 45, firstDay: (2024, 1, 10)).0])
        let csv = f.dir.path + "/spans.csv"
        try Data("""
            type,start,end,value,unit,source
            HKQuantityTypeIdentifierStepCount,2024-01-31T23:30:00+01:00,2024-02-01T00:30:00+01:00,600,count,Night Walker
            HKQuantityTypeIdentifierStepCount,2024-01-30T12:00:00+01:00,2024-02-02T12:00:00+01:00,7200,count,Long Counter
            HKQuantityTypeIdentifierStepCount,2024-02-29T23:00:00+01:00,2024-03-01T01:00:00+01:00,500,count,Leap Walker
            HKQuantityTypeIdentifierStepCount,2024-02-01T00:00:00+01:00,2024-02-01T00:10:00+01:00,77,count,Night Walker

            """.utf8).write(to: URL(fileURLWithPath: csv))
        #expect(try vault.importFiles([csv]).added == 4)
        let january = LocalMonth(year: 2024, month: 1), february = LocalMonth(year: 2024, month: 2)
        let before = try Self.answers(vault)
        _ = try vault.erase(categories: [.activity], from: january, to: january)
        _ = try vault.erase(categories: [.heart], from: february, to: february)
        // Records no figure comes from (sleep stages, workouts, routes) are counted for `types`.
        _ = try vault.erase(categories: [.sleep, .workouts, .location], from: january, to: january)
        let purged = try Self.answers(vault)
        #expect(purged != before)
        #expect(try vault.sources().contains { $0.key.name == "Long Counter" } == false)
        #expect(try vault.sources().contains { $0.key.name == "Night Walker" })   // its February sample stays
        _ = try vault.rebuildProjections()
        let rebuilt = try Self.answers(vault)
        #expect(purged.count == rebuilt.count)
        let differing = zip(purged, rebuilt).filter { $0 != $1 }
        #expect(differing.isEmpty, "first lines that differ (purged, rebuilt): \(differing.prefix(3))")
    }

    /// After an import no file in the vault directory holds a type, source or device name or a
    /// sample value in clear.
    /// No file of the vault holds what an unencrypted one would: the needles are the names,
    /// schema text and figures as SQLite stores them (each day's move as an 8-byte big-endian
    /// double), and each is first found in a plaintext copy of the same read models, so the
    /// search is shown to find what is there.
    @Test func nothingIsReadableAtRest() throws {
        let f = Fixture()
        let plaintext = f.dir.path + "/plain.db"
        var needles: [(String, Data)] = []
        do {
            let vault = try f.create()
            _ = try vault.importFiles([try f.export(days: 5).0])
            for ring in try vault.rings() where ring.move.rounded() != ring.move {
                needles.append(("move \(ring.move)", withUnsafeBytes(of: ring.move.bitPattern.bigEndian) { Data($0) }))
            }
            try vault.writePlaintextProjections(to: plaintext)
        }
        #expect(needles.count == 5, "\(needles.count) days with a fractional move")
        for text in ["HKQuantityTypeIdentifier", "StepCount", "ActiveEnergy", "Apple Watch", "iPhone", "Alex’s", "count/min",
                     "SQLite format", "CREATE TABLE", "daily_rings"] {
            needles.append((text, Data(text.utf8)))
        }
        let clear = try Data(contentsOf: URL(fileURLWithPath: plaintext))
        for (name, needle) in needles { #expect(clear.range(of: needle) != nil, "the plaintext copy lacks \(name)") }
        let files = try FileManager.default.contentsOfDirectory(atPath: f.path)
        #expect(files.contains(Vault.projectionsFileName))
        for name in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: f.path + "/" + name))
            for (label, needle) in needles {
                #expect(data.range(of: needle) == nil, "\(name) holds \(label)")
            }
            for text in ["Alex’s", "HKQuantityTypeIdentifier", "Apple Watch"] {
                #expect(data.range(of: Data(text.utf16LittleEndian)) == nil, "\(name) holds \(text) (UTF-16)")
            }
        }
    }

    @Test func sqlAndThePlaintextCopyAreExplicit() throws {
        let f = Fixture()
        let vault = try f.create()
        _ = try vault.importFiles([try f.export(days: 4).0])
        let result = try vault.query("SELECT date, move FROM daily_rings ORDER BY date")
        #expect(result.columns == ["date", "move"] && result.rows.count == 4)
        #expect(throws: ProjectionError.notReadOnly) { try vault.query("DELETE FROM rings") }
        #expect(throws: VaultError.plaintextInsideVault(path: f.path + "/copy.db")) { try vault.writePlaintextProjections(to: f.path + "/copy.db") }
        let copy = f.dir.path + "/copy.db"
        try vault.writePlaintextProjections(to: copy)
        let attributes = try FileManager.default.attributesOfItem(atPath: copy)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let header = try Data(contentsOf: URL(fileURLWithPath: copy)).prefix(15)
        #expect(String(decoding: header, as: UTF8.self) == "SQLite format 3")
        #expect(throws: VaultError.fileExists(path: copy)) { try vault.writePlaintextProjections(to: copy) }
    }

    @Test func goalsAndSourceNamesAreChecked() throws {
        let f = Fixture()
        let vault = try f.create()
        _ = try vault.importFiles([try f.export(days: 3).0])
        #expect(throws: VaultError.invalidGoal(ring: "stand", limit: Vault.goalLimit(.stand))) {
            try vault.setGoal(.stand, value: 25, from: LocalDay(year: 2024, month: 3, day: 21))
        }
        #expect(throws: VaultError.invalidGoal(ring: "move", limit: Vault.goalLimit(.move))) {
            try vault.setGoal(.move, value: .nan, from: LocalDay(year: 2024, month: 3, day: 21))
        }
        #expect(throws: VaultError.unknownSource(name: "Nobody’s Phone")) { try vault.setSourceOrder(names: ["Nobody’s Phone"]) }
        #expect(throws: VaultError.unknownMetric(name: "stepz", known: MetricNames.table.keys.sorted())) { try vault.summary(metric: "stepz", by: .day) }
        #expect(try vault.goalChanges().isEmpty)
    }
}

extension String {
    var utf16LittleEndian: [UInt8] { utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
}
