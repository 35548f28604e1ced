import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import Testing
@testable import Vault
import VaultTestSupport

/// A grant to `lab` and the bundle's lines, for the tests of what leaves the vault.
struct SharedLines {
    let t: ImportTestVault
    let key: String

    init(_ t: ImportTestVault) throws {
        self.t = t
        key = t.dir.path + "/lab"
        try RecipientKeyFiles.generate(prefix: key)
        try t.vault.addRecipient(name: "lab", publicKeyFile: key + ".pub")
    }

    /// An opened bundle's folder.
    struct Opened {
        let out: String
        /// The lines of a category's data file, which must exist (every category in force has one,
        /// empty when it holds nothing): a missing file is a failure, not "nothing".
        func lines(_ category: HealthCategory) -> [[String: Any]] {
            let path = out + "/data/\(category.rawValue).ndjson"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                Issue.record("\(path) does not exist: the bundle has no data file for \(category.rawValue)")
                return []
            }
            return text.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        }
        /// Whether the bundle has no data file for `category` (one not in force).
        func hasNoFile(_ category: HealthCategory) -> Bool {
            !FileManager.default.fileExists(atPath: out + "/data/\(category.rawValue).ndjson")
        }
        func csv(_ category: HealthCategory) -> String {
            let path = out + "/data/\(category.rawValue).csv"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                Issue.record("\(path) does not exist: the bundle has no CSV for \(category.rawValue)")
                return ""
            }
            return text
        }
    }

    /// Grants `categories` for `from...to` at `granularity` (given in 2023), exports on
    /// 2025-01-01 with CSV, and opens the bundle.
    func export(_ categories: [HealthCategory], from: LocalDay?, to: LocalDay?, granularity: Granularity = .raw) throws -> Opened {
        try t.vault.grant(recipient: "lab", categories: categories, from: from, to: to, granularity: granularity, expires: nil,
                          purpose: nil, now: Date(timeIntervalSince1970: 1_700_000_000))
        let name = UUID().uuidString
        let bundle = t.dir.path + "/\(name).bundle", out = t.dir.path + "/\(name)"
        _ = try t.vault.export(to: "lab", path: bundle, csv: true, today: LocalDay(year: 2025, month: 1, day: 1))
        _ = try BundleReader.open(bundle, keyFile: key + ".key", outputDirectory: out)
        return Opened(out: out)
    }
}

/// Raw exports hold nothing outside the consented period (issue 15, the first finding): a span
/// that reaches outside is cut at the period's edge in its own clock, cumulative amounts pro
/// rata, and marked `"clipped":true`.
@Suite struct RawExportClippingTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test func aPregnancyRunningPastAJanuaryGrantEndsAtTheEndOfJanuary() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("p.csv", """
            type,start,end,value,unit,source
            HKCategoryTypeIdentifierPregnancy,2024-01-10T00:00:00+01:00,2024-09-10T00:00:00+02:00,HKCategoryValueNotApplicable,,Phone

            """)], timeZone: Self.utc)
        let shared = try SharedLines(t)
        let opened = try shared.export([.reproductive], from: LocalDay(year: 2024, month: 1, day: 1), to: LocalDay(year: 2024, month: 1, day: 31))
        let lines = opened.lines(.reproductive), csv = opened.csv(.reproductive)
        #expect(lines.count == 1)
        #expect(lines[0]["start"] as? String == "2024-01-10T00:00:00+01:00")
        // Midnight in January's offset: September's (the far end, outside the period) is not shared.
        #expect(lines[0]["end"] as? String == "2024-02-01T00:00:00+01:00")
        #expect(lines[0]["clipped"] as? Bool == true)
        #expect(csv.split(separator: "\n").last?.hasSuffix(",true") == true)
    }

    @Test func aTenDaySampleIsCutToTheOneDayGrantedAndItsStepsProRated() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("s.csv", """
            type,start,end,value,unit,source
            steps,2024-03-01T00:00:00Z,2024-03-11T00:00:00Z,50000,count,Band
            steps,2024-03-04T23:30:00Z,2024-03-05T00:30:00Z,600,count,Band
            steps,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,1234,count,Band

            """)], timeZone: Self.utc)
        let day = LocalDay(year: 2024, month: 3, day: 5)
        let lines = try SharedLines(t).export([.activity], from: day, to: day).lines(.activity)
        #expect(lines.count == 3)
        let long = try #require(lines.first { ($0["value"] as? NSNumber)?.doubleValue == 5000 })
        #expect(long["start"] as? String == "2024-03-05T00:00:00+00:00" && long["end"] as? String == "2024-03-06T00:00:00+00:00")
        #expect(long["clipped"] as? Bool == true)
        // The half hour before midnight belongs to the day before: only the half after it leaves.
        let late = try #require(lines.first { ($0["value"] as? NSNumber)?.doubleValue == 300 })
        #expect(late["start"] as? String == "2024-03-05T00:00:00+00:00" && late["end"] as? String == "2024-03-05T00:30:00+00:00")
        // A sample wholly inside is as recorded: exact value, no flag.
        let inside = try #require(lines.first { $0["start"] as? String == "2024-03-05T08:00:00+00:00" })
        #expect(inside["value"] as? NSNumber == 1234 && inside["clipped"] == nil)
    }

    @Test func theEdgeFollowsTheSamplesOwnOffsetAcrossADSTChange() throws {
        let t = try ImportTestVault()
        // Europe's spring change on 2024-03-31: the sample starts in winter time and ends in summer time.
        _ = try t.vault.importFiles([t.write("s.csv", """
            type,start,end,value,unit,source
            steps,2024-03-31T01:00:00+01:00,2024-04-01T02:00:00+02:00,2400,count,Band
            heart-rate,2024-03-31T23:59:00+02:00,2024-04-01T00:01:00+02:00,70,count/min,Band

            """)], timeZone: Self.utc)
        let day = LocalDay(year: 2024, month: 3, day: 31)
        let opened = try SharedLines(t).export([.activity, .heart], from: day, to: day)
        let activity = opened.lines(.activity), heart = opened.lines(.heart)
        #expect(activity.count == 1)
        #expect(activity[0]["end"] as? String == "2024-04-01T00:00:00+02:00" && activity[0]["value"] as? NSNumber == 2200)
        // A discrete reading keeps its value; only its span is cut.
        #expect(heart.count == 1)
        #expect(heart[0]["end"] as? String == "2024-04-01T00:00:00+02:00" && heart[0]["value"] as? NSNumber == 70)
    }

    @Test func samplesWhollyOutsideThePeriodStayHome() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("s.csv", """
            type,start,end,value,unit,source
            steps,2024-03-04T10:00:00Z,2024-03-04T11:00:00Z,10,count,Band
            steps,2024-03-06T00:00:00Z,2024-03-06T01:00:00Z,20,count,Band
            steps,2024-03-04T23:00:00Z,2024-03-05T00:00:00Z,30,count,Band
            heart-rate,2024-03-06T00:00:00Z,2024-03-06T00:00:00Z,80,count/min,Band

            """)], timeZone: Self.utc)
        let day = LocalDay(year: 2024, month: 3, day: 5)
        let opened = try SharedLines(t).export([.activity, .heart], from: day, to: day)
        #expect(opened.lines(.activity).isEmpty && opened.lines(.heart).isEmpty)
    }

    @Test func aWorkoutAcrossMidnightIsCutAndItsDurationProRated() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("export.xml", export("""
            <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="60" durationUnit="min" sourceName="Watch" \
            startDate="2024-03-04 23:30:00 +0000" endDate="2024-03-05 00:30:00 +0000"/>
            """))], timeZone: Self.utc)
        let day = LocalDay(year: 2024, month: 3, day: 5)
        let lines = try SharedLines(t).export([.workouts], from: day, to: day).lines(.workouts)
        #expect(lines.count == 1)
        #expect(lines[0]["start"] as? String == "2024-03-05T00:00:00+00:00" && lines[0]["end"] as? String == "2024-03-05T00:30:00+00:00")
        #expect(lines[0]["value"] as? NSNumber == 30 && lines[0]["clipped"] as? Bool == true)
    }
}
