import EventLog
import Foundation
@testable import HealthModel
import Testing
import VaultTestSupport
@testable import Vault

/// What tells two samples apart (issue 16): every field, metadata and creation date included;
/// identical records counted as a multiset; re-imports still add nothing.
@Suite struct SampleIdentityTests {
    /// Two foods of one meal, the same energy and times, told apart only by `HKFoodType`, each in
    /// a correlation that also lists its member.
    static func food(_ name: String, kcal: String = "690") -> String {
        let energy = """
            <Record type="HKQuantityTypeIdentifierDietaryEnergyConsumed" sourceName="MyFitnessPal" unit="kcal" creationDate="2024-05-01 13:05:00 +0200" startDate="2024-05-01 13:00:00 +0200" endDate="2024-05-01 13:00:00 +0200" value="\(kcal)">
             <MetadataEntry key="HKFoodType" value="\(name)"/>
            </Record>
            """
        return """
            \(energy)
            <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="MyFitnessPal" creationDate="2024-05-01 13:05:00 +0200" startDate="2024-05-01 13:00:00 +0200" endDate="2024-05-01 13:00:00 +0200">
             <MetadataEntry key="HKFoodType" value="\(name)"/>
            \(energy)
            </Correlation>
            """
    }

    @Test func twoFoodsThatDifferOnlyInMetadataAreBothKept() throws {
        let t = try ImportTestVault()
        let file = t.write("meal.xml", export(Self.food("Pasta") + Self.food("Salad")))
        let first = try t.vault.importFiles([file])
        // Two energy records and two correlations; the members repeat the top-level records.
        #expect(first.files[0].added == 4 && first.files[0].duplicates == 0 && first.files[0].repeats == 2)
        #expect(try t.vault.summary(metric: "HKQuantityTypeIdentifierDietaryEnergyConsumed", by: .day, from: nil, to: nil).map(\.value) == [1380])
        let again = try t.vault.importFiles([file])
        #expect(again.added == 0 && again.files[0].duplicates == 4 && again.files[0].repeats == 2)
    }

    @Test func identicalRecordsInOneFileAreTwoSamplesAndAReimportAddsNothing() throws {
        let t = try ImportTestVault()
        let glass = stepRecord("2024-05-01 08:00:00 +0200", "2024-05-01 08:10:00 +0200", "250")
        let twice = t.write("twice.xml", export(glass + "\n" + glass))
        #expect(try t.vault.importFiles([twice]).added == 2)
        #expect(try t.vault.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [500])
        let again = try t.vault.importFiles([twice])
        #expect(again.added == 0 && again.duplicates == 2)
        // A later export holding one of them adds nothing; one holding three adds the third.
        #expect(try t.vault.importFiles([t.write("once.xml", export(glass))]).added == 0)
        let thrice = try t.vault.importFiles([t.write("thrice.xml", export([glass, glass, glass].joined(separator: "\n")))])
        #expect(thrice.added == 1 && thrice.duplicates == 2)
    }

    @Test func metadataInAnotherOrderIsTheSameSample() throws {
        let t = try ImportTestVault()
        func record(_ entries: [(String, String)]) -> String {
            let metadata = entries.map { "  <MetadataEntry key=\"\($0.0)\" value=\"\($0.1)\"/>" }.joined(separator: "\n")
            return """
                <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-05-01 08:00:05 +0200" startDate="2024-05-01 08:00:00 +0200" endDate="2024-05-01 08:00:00 +0200" value="61">
                \(metadata)
                </Record>
                """
        }
        let entries = [("HKMetadataKeyHeartRateMotionContext", "1"), ("HKMetadataKeySyncIdentifier", "A1B2C3D4E5F60718293A4B5C6D7E8F90")]
        #expect(try t.vault.importFiles([t.write("a.xml", export(record(entries)))]).added == 1)
        #expect(try t.vault.importFiles([t.write("b.xml", export(record(entries.reversed())))]).duplicates == 1)
        // Another creation date is another sample.
        let later = record(entries).replacingOccurrences(of: "creationDate=\"2024-05-01 08:00:05", with: "creationDate=\"2024-05-01 08:00:06")
        #expect(try t.vault.importFiles([t.write("c.xml", export(later))]).added == 1)
        let samples = try t.samples()
        #expect(samples.map(\.creationDate?.seconds) == [1_714_543_205, 1_714_543_206])
        #expect(samples[0].metadata.map(\.key) == ["HKMetadataKeyHeartRateMotionContext", "HKMetadataKeySyncIdentifier"])
    }

    @Test func membersWithoutATopLevelCopyCountTheSameOnEveryImport() throws {
        let t = try ImportTestVault()
        // Blood pressure as some apps export it: the two members only inside the correlation.
        let pressure = """
            <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Omron" creationDate="2024-05-01 07:00:10 +0200" startDate="2024-05-01 07:00:00 +0200" endDate="2024-05-01 07:00:00 +0200">
             <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" unit="mmHg" startDate="2024-05-01 07:00:00 +0200" endDate="2024-05-01 07:00:00 +0200" value="121"/>
             <Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Omron" unit="mmHg" startDate="2024-05-01 07:00:00 +0200" endDate="2024-05-01 07:00:00 +0200" value="79"/>
            </Correlation>
            """
        let file = t.write("bp.xml", export(pressure + "\n" + stepRecord("2024-05-01 08:00:00 +0200", "2024-05-01 08:10:00 +0200", "250")))
        let first = try t.vault.importFiles([file]).files[0]
        #expect([first.added, first.duplicates, first.repeats] == [4, 0, 0] as [Int])
        let again = try t.vault.importFiles([file]).files[0]
        #expect([again.added, again.duplicates, again.repeats] == [0, 4, 0] as [Int])
    }

    /// A vault written before identities covered every field (log format 2, the fixture) holds
    /// legacy identities: the same export again adds nothing, and a record the old identity had
    /// merged into another comes in now.
    @Test func aVaultWithLegacyIdentitiesTakesTheSameExportAsDuplicatesAndRecoversMergedRecords() throws {
        let dir = TemporaryDirectory("legacy-identity")
        let vault = try FixtureVaults.open("vault-format2", in: dir)
        let original = FixtureVaults.path("vault-format1", "export.xml")
        let again = try vault.importFiles([original])
        // Me, five records, a workout and an activity summary.
        #expect(again.added == 0 && again.duplicates == 8)
        // The same steps record twice, the second differing only in metadata: the legacy identity
        // held one of them; the other is added.
        let xml = try String(contentsOfFile: original, encoding: .utf8)
        let step = xml.split(separator: "\n").first { $0.contains("value=\"500\"") }!
        let twin = step.replacingOccurrences(of: "/>", with: "><MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/></Record>")
        let extended = dir.path + "/extended.xml"
        try xml.replacingOccurrences(of: String(step), with: step + "\n" + twin).write(toFile: extended, atomically: true, encoding: .utf8)
        let recovered = try vault.importFiles([extended])
        #expect(recovered.added == 1 && recovered.duplicates == 8)
        #expect(try vault.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [1000, 800])
        #expect(try vault.importFiles([extended]).added == 0)
    }
}

/// iOS 8 exports as they were (issue 16): category samples with `unit=""` and numbered values,
/// attributes of their own (`HKWasUserEntered`, `sessionId`) kept as metadata.
@Suite struct IOS8ExportTests {
    static let body = """
         <Record type="HKQuantityTypeIdentifierBodyMass" source="Health" unit="kg" creationDate="20150603050217+0100" startDate="20150603050200+0100" endDate="20150603050200+0100" HKWasUserEntered="1" value="71.1"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" source="Sleep Cycle" unit="" creationDate="20150618043851+0100" startDate="20150617215149+0100" endDate="20150618043851+0100" sessionId="p19" value="1"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" source="Sleep Cycle" unit="" creationDate="20150618043851+0100" startDate="20150617215149+0100" endDate="20150618043851+0100" sessionId="p20" value="1"/>
         <Record type="HKCategoryTypeIdentifierAppleStandHour" source="Watch" unit="" creationDate="20150618100000+0100" startDate="20150618090000+0100" endDate="20150618100000+0100" value="0"/>
        """

    @Test func categorySamplesWithAnEmptyUnitAndExtraAttributesAreKept() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("export.xml", export(Self.body))])
        // The two sleep sessions differ only in their session id: two samples.
        #expect(report.added == 4 && report.rejected == 0)
        // Stand hour 0 is "stood".
        #expect(try t.vault.rings().map(\.stand) == [1])
        let samples = try t.samples()
        #expect(samples[0].metadata == [MetadataEntry(key: "HKWasUserEntered", value: "1")])
        #expect(samples[1].value == .category("HKCategoryValueSleepAnalysisAsleep") && samples[1].metadata == [MetadataEntry(key: "sessionId", value: "p19")])
        let nights = try t.vault.sleep()
        // 21:51:49 to 04:38:51 asleep, from one source, counted once.
        let expected: Double = 24_422.0 / 60  // 6 h 47 min 2 s
        #expect(nights.count == 1)
        #expect(nights[0].asleep == expected)
    }

    /// A vault made by a build before commit 3850060 from the same export (the fixture) stored
    /// these category records as numbers with an empty unit, under legacy identities that
    /// ignored `sessionId`.
    /// They read as the sleep and stand hours they are, and the same export again adds only the
    /// sleep session the old rule had merged into the other.
    @Test func aVaultThatStoredThemAsNumbersShowsThemAndTakesTheExportAgain() throws {
        let dir = TemporaryDirectory("ios8-legacy")
        let vault = try FixtureVaults.open("vault-ios8-numbers", in: dir)
        let asleep: Double = 24_422.0 / 60
        #expect(try vault.sleep().map(\.asleep) == [asleep])
        #expect(try vault.rings().map(\.stand) == [1])
        let held = try vault.heldTypes().map { "\($0.type) \($0.count) \($0.unit ?? "-")" }.sorted()
        #expect(held == ["HKCategoryTypeIdentifierAppleStandHour 1 -", "HKCategoryTypeIdentifierSleepAnalysis 1 -", "HKQuantityTypeIdentifierBodyMass 1 kg"])

        let export = FixtureVaults.path("vault-ios8-numbers", "export.xml")
        let again = try vault.importFiles([export])
        #expect(again.added == 1 && again.duplicates == 3 && again.rejected == 0)
        #expect(try vault.sleep().map(\.asleep) == [asleep], "the two sessions share their span: one night, counted once")
        #expect(try vault.rings().map(\.stand) == [1])
        #expect(try vault.importFiles([export]).added == 0)
        // What a vault made today from the export holds: the same samples.
        let fresh = try ImportTestVault()
        _ = try fresh.vault.importFiles([export])
        #expect(try vault.heldTypes().map { "\($0.type) \($0.count)" }.sorted() == (try fresh.vault.heldTypes().map { "\($0.type) \($0.count)" }.sorted()))
    }
}
