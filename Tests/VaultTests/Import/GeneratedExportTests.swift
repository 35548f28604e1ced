import EventLog
import Foundation
@testable import HealthModel
import SyntheticHealth
import Testing
@testable import Vault
import VaultTestSupport

/// The generator's exports: what the tests, the demo and the benchmark import.
@Suite struct GeneratedExportTests {
    @Test func everyGeneratedRecordIsImportedOnceAndAgainAddsNothing() throws {
        let t = try ImportTestVault()
        let zip = t.dir.path + "/export.zip"
        // March 31 2024 is the DST switch.
        let summary = try SyntheticExport.writeZip(to: zip, options: .init(days: 25, firstDay: (2024, 3, 20)))
        let first = try t.vault.importFiles([zip])
        #expect(first.added == summary.records + summary.routeFiles)
        #expect(first.rejected == 0 && first.duplicates == 0 && first.files[0].warnings.isEmpty)
        let again = try t.vault.importFiles([zip])
        #expect(again.added == 0 && again.duplicates == first.added)

        let samples = try t.samples()
        // Both sides of the DST switch, from both devices.
        let offsets = Set(samples.map(\.start.utcOffset))
        #expect(offsets == [3600, 7200])
        #expect(Set(samples.compactMap(\.source.device?.model)) == ["Watch", "iPhone"])
        // Sleep crosses midnight in local time.
        #expect(samples.contains { s in
            s.type == "HKCategoryTypeIdentifierSleepAnalysis"
                && (s.start.seconds + Int64(s.start.utcOffset)) / 86_400 != (s.end.seconds + Int64(s.end.utcOffset)) / 86_400
        })
        #expect(samples.contains { !$0.beats.isEmpty })
    }

    @Test func theTripUsesNewYorkTime() throws {
        let t = try ImportTestVault()
        let xmlDir = t.dir.path + "/folder"
        _ = try SyntheticExport.writeFolder(at: xmlDir, options: .init(days: 12, firstDay: (2024, 6, 1), tripStart: 3))
        let report = try t.vault.importFiles([xmlDir + "/apple_health_export/export.xml"])
        #expect(report.rejected == 0 && report.files[0].warnings.isEmpty)
        #expect(Set(try t.samples().map(\.start.utcOffset)).contains(-4 * 3600))
    }
}
