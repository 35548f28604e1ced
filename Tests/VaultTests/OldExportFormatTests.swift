import Foundation
@testable import HealthModel
import Testing
@testable import Vault
import VaultTestSupport

/// iOS 8 and early iOS 9 exports (issue 16): `source=` instead of `sourceName=`, compact dates.
@Suite struct OldExportFormatTests {
    @Test func anIOS8RecordIsImportedWithItsSourceAndCompactDates() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("export.xml", export("""
            <Record type="HKQuantityTypeIdentifierStepCount" source="Sam’s iPhone" unit="count" startDate="20141018163235+0100" endDate="20141018164235+0100" value="42"/>
            <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2014-10-18 16:40:00 +0100" endDate="2014-10-18 16:40:00 +0100" value="61"/>
            <Record type="HKQuantityTypeIdentifierStepCount" source="Sam’s iPhone" unit="count" startDate="20141332163235+0100" endDate="20141018164235+0100" value="7"/>
            """))])
        #expect(report.added == 2 && report.rejected == 1)
        let samples = try t.samples()
        #expect(samples[0].source.name == "Sam’s iPhone")
        #expect(samples[0].start == HealthTimestamp(seconds: 1_413_646_355, utcOffset: 3600))  // 2014-10-18T15:32:35Z
        #expect(samples[0].end.seconds - samples[0].start.seconds == 600)
        #expect(samples[1].source.name == "Watch")
    }
}
