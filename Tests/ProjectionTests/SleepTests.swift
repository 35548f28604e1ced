import Foundation
@testable import HealthModel
import SyntheticHealth
import Testing
import TestSupport
@testable import Vault
import VaultTestSupport

/// `sleep` and category summaries (issue 16): per night, stages, sources deduplicated, a night
/// across midnight and a DST switch counted once.
@Suite struct SleepTests {
    static let watch = "sourceName=\"Apple Watch\" device=\"&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.0&gt;\""
    static let phone = "sourceName=\"iPhone\" device=\"&lt;&lt;HKDevice: 0x2&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,2, software:17.0&gt;\""
    static let app = "sourceName=\"Sleep Cycle\" device=\"&lt;&lt;HKDevice: 0x3&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,2, software:17.0&gt;\""

    static func record(_ source: String, _ start: String, _ end: String, _ stage: String) -> String {
        " <Record type=\"HKCategoryTypeIdentifierSleepAnalysis\" \(source) startDate=\"\(start)\" endDate=\"\(end)\" value=\"HKCategoryValueSleepAnalysis\(stage)\"/>"
    }

    /// The night of Berlin's switch to summer time (02:00 → 03:00 on 2024-03-31), computed by hand.
    static let night = [
        record(phone, "2024-03-30 23:00:00 +0100", "2024-03-31 07:30:00 +0200", "InBed"),            // 450 min
        record(watch, "2024-03-30 23:30:00 +0100", "2024-03-31 01:30:00 +0100", "AsleepCore"),       // 120
        record(watch, "2024-03-31 01:30:00 +0100", "2024-03-31 03:30:00 +0200", "AsleepDeep"),       // 60, across the switch
        record(watch, "2024-03-31 03:30:00 +0200", "2024-03-31 05:00:00 +0200", "AsleepREM"),        // 90
        record(watch, "2024-03-31 05:00:00 +0200", "2024-03-31 05:10:00 +0200", "Awake"),            // 10
        record(watch, "2024-03-31 05:10:00 +0200", "2024-03-31 07:00:00 +0200", "AsleepCore"),       // 110
        // Another app on the phone: hidden where the Watch has stages; its last 20 minutes count.
        record(app, "2024-03-31 00:00:00 +0100", "2024-03-31 07:20:00 +0200", "AsleepUnspecified"),
        // Ends after 18:00: the next day's night.
        record(phone, "2024-03-31 21:30:00 +0200", "2024-03-31 22:10:00 +0200", "InBed"),
        // Mindful minutes, for the category summary.
        " <Record type=\"HKCategoryTypeIdentifierMindfulSession\" \(watch) startDate=\"2024-03-31 12:00:00 +0200\" endDate=\"2024-03-31 12:05:00 +0200\"/>",
        " <Record type=\"HKCategoryTypeIdentifierMindfulSession\" \(watch) startDate=\"2024-04-01 12:00:00 +0200\" endDate=\"2024-04-01 12:10:00 +0200\"/>",
    ].joined(separator: "\n")

    @Test func aNightAcrossMidnightAndDSTIsCountedOnceWithTheWatchFirst() throws {
        let dir = TemporaryDirectory("sleep")
        let vault = try makeVault(at: dir.path + "/v", passphrase: "p")
        let xml = dir.path + "/export.xml"
        try Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"de_DE\">\n\(Self.night)\n</HealthData>\n".utf8)
            .write(to: URL(fileURLWithPath: xml))
        #expect(try vault.importFiles([xml]).added == 10)
        let nights = try vault.sleep()
        #expect(nights.count == 2)
        let n = nights[0]
        #expect(n.night == LocalDay(year: 2024, month: 3, day: 31))
        #expect(n.start.iso8601 == "2024-03-30T23:00:00+01:00" && n.end.iso8601 == "2024-03-31T07:30:00+02:00")
        #expect([n.inBed, n.asleep, n.core, n.deep, n.rem, n.awake] == [450, 400, 230, 60, 90, 10])
        #expect(n.source == "Apple Watch")
        #expect(nights[1].night == LocalDay(year: 2024, month: 4, day: 1) && nights[1].inBed == 40 && nights[1].asleep == 0)
        // summary sleep: minutes asleep per night's day; mindful: minutes; stand hours: counts.
        #expect(try vault.summary(metric: "sleep", by: .day).map { "\($0.period) \($0.value) \($0.unit)" }
                == ["2024-03-31 400.0 min", "2024-04-01 0.0 min"])
        #expect(try vault.summary(metric: "mindful", by: .month).map { "\($0.period) \($0.value) \($0.unit) \($0.samples)" }
                == ["2024-03 5.0 min 1", "2024-04 10.0 min 1"])
    }

    /// Forty generated nights over the DST switch and a trip across time zones: every night's
    /// figures equal what the generator wrote (the phone's time in bed, the Watch's stages).
    @Test func generatedNightsMatchTheGeneratorsTruth() throws {
        let dir = TemporaryDirectory("sleep-generated")
        let vault = try makeVault(at: dir.path + "/v", passphrase: "p")
        let zip = dir.path + "/export.zip"
        let summary = try SyntheticExport.writeZip(to: zip, options: .init(days: 40))
        _ = try vault.importFiles([zip])
        let nights = try vault.sleep()
        #expect(nights.count == summary.days.count)
        for n in nights {
            let t = try #require(summary.days[n.night.dayNumber], "\(n.night)")
            #expect(abs(n.inBed - t.sleepInBed) < 1e-9 && abs(n.core - t.sleepCore) < 1e-9 && abs(n.deep - t.sleepDeep) < 1e-9
                    && abs(n.rem - t.sleepREM) < 1e-9 && abs(n.awake - t.sleepAwake) < 1e-9, "\(n.night)")
            #expect(abs(n.asleep - (t.sleepCore + t.sleepDeep + t.sleepREM)) < 1e-9)
        }
    }
}
