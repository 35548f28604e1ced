import Foundation
import Testing
@testable import Vault

/// The last file of an import adds the samples of a category-month the vault held nothing of
/// without keeping their identities (`ImportSession.addUnremembered`): nothing can match them but
/// a later file (there is none) or a correlation's member (their types are no correlation's).
/// What the import decides must be what keeping every identity decided.
@Suite struct FreshMonthIdentityTests {
    private static let glass = stepRecord("2024-05-01 08:00:00 +0200", "2024-05-01 08:10:00 +0200", "250")
    private static let walk = stepRecord("2024-05-01 09:00:00 +0200", "2024-05-01 09:30:00 +0200", "1800")

    /// Two files of one import over the same fresh month: the second, the last, still finds the
    /// first's samples (the first kept their identities: a later file could repeat them).
    @Test func theLastFileFindsWhatAnEarlierFileOfTheImportAdded() throws {
        let t = try ImportTestVault()
        let a = t.write("a.xml", export(Self.glass + "\n" + Self.walk))
        let b = t.write("b.xml", export(Self.walk + "\n" + Self.glass + "\n" + Self.glass))
        let report = try t.vault.importFiles([a, b])
        #expect(report.files.map { [$0.added, $0.duplicates] } == [[2, 0], [1, 2]])
        #expect(try t.vault.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [2300])
        // Both again, one file after the other: the month is no longer fresh.
        #expect(try t.vault.importFiles([b]).files.map { [$0.added, $0.duplicates] } == [[0, 3]])
        #expect(try t.vault.importFiles([a]).files.map { [$0.added, $0.duplicates] } == [[0, 2]])
    }

    /// A fresh month's identical records are two samples, as they are with identities kept; the
    /// same file again finds both.
    @Test func identicalRecordsOfAFreshMonthAreTwoSamples() throws {
        let t = try ImportTestVault()
        let file = t.write("twice.xml", export(Self.glass + "\n" + Self.glass))
        #expect(try t.vault.importFiles([file]).files.map { [$0.added, $0.duplicates] } == [[2, 0]])
        #expect(try t.vault.importFiles([file]).files.map { [$0.added, $0.duplicates] } == [[0, 2]])
        #expect(try t.vault.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [500])
    }

    /// Members of a correlation keep their identities in a fresh month: the export's top-level
    /// copy of a blood pressure's reading is the member, once.
    @Test func aCorrelationsMembersInAFreshMonthAreCountedOnce() throws {
        let t = try ImportTestVault()
        let systolic = #"<Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" unit="mmHg" startDate="2024-05-01 07:00:00 +0200" endDate="2024-05-01 07:00:00 +0200" value="121"/>"#
        let diastolic = #"<Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Omron" unit="mmHg" startDate="2024-05-01 07:00:00 +0200" endDate="2024-05-01 07:00:00 +0200" value="79"/>"#
        let pressure = """
            <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Omron" startDate="2024-05-01 07:00:00 +0200" endDate="2024-05-01 07:00:00 +0200">
             \(systolic)
             \(diastolic)
            </Correlation>
            """
        let file = t.write("bp.xml", export([systolic, diastolic, Self.glass, pressure].joined(separator: "\n")))
        let first = try t.vault.importFiles([file]).files[0]
        #expect([first.added, first.duplicates, first.repeats] == [4, 0, 2] as [Int])
        #expect(try t.samples().filter { $0.type.contains("BloodPressure") }.count == 2)
        let again = try t.vault.importFiles([file]).files[0]
        #expect([again.added, again.duplicates, again.repeats] == [0, 4, 2] as [Int])
    }

    /// A correlation holding a type no HealthKit correlation holds (outside Apple's rules): its
    /// member repeats a top-level record added without its identity, and is that record.
    @Test func aMemberOfATypeNoCorrelationHoldsIsItsTopLevelCopy() throws {
        let t = try ImportTestVault()
        let odd = """
            <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="iPhone" startDate="2024-05-01 08:00:00 +0200" endDate="2024-05-01 08:10:00 +0200">
             \(Self.glass)
            </Correlation>
            """
        let report = try t.vault.importFiles([t.write("odd.xml", export(Self.glass + "\n" + odd))]).files[0]
        #expect([report.added, report.duplicates, report.repeats] == [2, 0, 1] as [Int])
        #expect(try t.vault.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [250])
    }
}
