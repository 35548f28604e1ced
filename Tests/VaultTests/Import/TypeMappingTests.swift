import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import Testing
@testable import Vault
import VaultTestSupport

/// `other` never collects heart, sleep or reproductive data (issue 15, the second finding):
/// every documented HealthKit type has its category, names people and apps write are matched or
/// refused, and what is kept under `other` is said at import and before it is shared.
@Suite struct TypeMappingTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test func aCSVOfNearMissNamesLandsInTheirCategoriesAndSaysWhatOtherKeeps() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("mixed.csv", """
            type,start,end,value,unit,source
            heart_rate,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,61,count/min,Band
            HEART_RATE_VARIABILITY,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,42,ms,Band
            Sleep,2024-03-04T23:00:00Z,2024-03-05T06:00:00Z,HKCategoryValueSleepAnalysisAsleepCore,,Band
            heart_stuff,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,1,,Band
            noise_level,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,55,dB,Band
            noise_level,2024-03-05T09:00:00Z,2024-03-05T09:00:00Z,57,dB,Band

            """)], timeZone: Self.utc)
        #expect(report.added == 5 && report.rejected == 1)
        #expect(report.files[0].warnings.contains("kept under other, which only a grant of other shares: noise_level (2)"))
        #expect(report.files[0].warnings.contains {
            $0.hasPrefix("1 row(s) rejected: a type name this build does not know that reads as heart data (the closest known is HeartRate;") && $0.hasSuffix("(first at line 5)")
        })
        let categories = try t.samples().map { "\($0.type)=\($0.category.rawValue)" }
        #expect(categories == ["HKQuantityTypeIdentifierHeartRate=heart", "HKQuantityTypeIdentifierHeartRateVariabilitySDNN=heart",
                               "HKCategoryTypeIdentifierSleepAnalysis=sleep", "noise_level=other", "noise_level=other"])
        #expect(try t.vault.typesHeld(in: .other).map { "\($0.type) \($0.count)" } == ["noise_level 2"])
    }

    @Test func aCompanionPostOfSleepAsANumberIsRefusedNotFiledUnderOther() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("post.json", """
            [{"metric":"SLEEP","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":7}]},
             {"metric":"HEART_RATE","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 08:00","value":61}]},
             {"metric":"HEARTBEAT_SCORE","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 08:00","value":3}]}]
            """)], timeZone: Self.utc)
        #expect(report.added == 1 && report.rejected == 2)
        #expect(report.files[0].warnings.sorted() == [
            "1 entry rejected: a metric name this build does not know that reads as heart data (the closest known is HeartbeatSeries) (first at [2].data[0])",
            "1 entry rejected: a number for a type that takes a category value (first at [0].data[0])",
        ])
        #expect(try t.samples().map(\.category) == [.heart])
    }

    @Test func aGrantOfOtherForAHearingStudyShipsNoHeartSleepOrReproductiveData() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("export.xml", export("""
            <Record type="HKCategoryTypeIdentifierRapidPoundingOrFlutteringHeartbeat" sourceName="Phone" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:10:00 +0000" value="HKCategoryValueSeverityModerate"/>
            <Record type="HKCategoryTypeIdentifierBleedingDuringPregnancy" sourceName="Phone" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:10:00 +0000" value="HKCategoryValueNotApplicable"/>
            <Record type="HKDataTypeSleepDurationGoal" sourceName="Phone" unit="hr" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:00:00 +0000" value="8"/>
            <Record type="HKCategoryTypeIdentifierHypertensionEvent" sourceName="Watch" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:00:00 +0000" value="HKCategoryValueNotApplicable"/>
            <Record type="HKQuantityTypeIdentifierEnvironmentalAudioExposure" sourceName="Watch" unit="dBASPL" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:30:00 +0000" value="61"/>
            """))], timeZone: Self.utc)
        let lines = try SharedLines(t).export([.other], from: nil, to: nil).lines(.other)
        #expect(lines.map { $0["type"] as? String } == ["HKQuantityTypeIdentifierEnvironmentalAudioExposure"])
    }

    /// A grant of `other` covers the types `other` held when it was given (as `grant` listed
    /// them); a type that arrives later under `other` does not leave until a new grant.
    @Test func aGrantOfOtherCoversOnlyTheTypesItHeldWhenGiven() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("first.csv", """
            type,start,end,value,unit,source
            noise_level,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,55,dB,Band

            """)], timeZone: Self.utc)
        let shared = try SharedLines(t)
        try t.vault.grant(recipient: "lab", categories: [.other], from: nil, to: nil, granularity: .raw, expires: nil, purpose: nil)
        let grant = try #require(try t.vault.consentLedger().inForce(for: "lab", on: LocalDay(year: 2025, month: 1, day: 1))[.other])
        #expect(grant.otherTypes == ["noise_level"])
        _ = try t.vault.importFiles([t.write("later.csv", """
            type,start,end,value,unit,source
            uv_index,2024-03-06T08:00:00Z,2024-03-06T08:00:00Z,7,,Band
            noise_level,2024-03-06T08:00:00Z,2024-03-06T08:00:00Z,57,dB,Band

            """)], timeZone: Self.utc)
        let bundle = t.dir.path + "/first.bundle", out = t.dir.path + "/first"
        _ = try t.vault.export(to: "lab", path: bundle, today: LocalDay(year: 2025, month: 1, day: 1))
        _ = try BundleReader.open(bundle, keyFile: shared.key + ".key", outputDirectory: out)
        let text = try String(contentsOfFile: out + "/data/other.ndjson", encoding: .utf8)
        let firstTypes = try text.split(separator: "\n").map { (try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["type"] as? String }
        #expect(firstTypes == ["noise_level", "noise_level"])
        // A new grant lists both, and both leave.
        let again = try shared.export([.other], from: nil, to: nil)
        let types = try String(contentsOfFile: again.out + "/data/other.ndjson", encoding: .utf8).split(separator: "\n")
            .map { try (JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["type"] as! String }.sorted()
        #expect(types == ["noise_level", "noise_level", "uv_index"])
    }
}
