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

    /// Withings wrote metadata as attributes whose names hold spaces (a real German iOS 8 export,
    /// issue 36; the record's shape as openradar 21431305 quotes it, values made up): the
    /// records are read, the names kept with their spaces.
    @Test func attributeNamesWithSpacesAreReadAsMetadata() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("exportieren.xml", export("""
            <Record type="HKQuantityTypeIdentifierBodyFatPercentage" source="Withings" unit="%" creationDate="20150616071916-0700" startDate="20150616071908-0700" endDate="20150616071908-0700" Health Mate App Version="2.6.0" HKDeviceSerialNumber="00:24:e4:00:00:00" Withings User Identifier="1234" Modified Date="2015-06-16 14:19:08 +0000" Withings Link="withings-bd2://timeline/measure?userid=1234" HKWasUserEntered="0" value="0.213"/>
            <Record type="HKQuantityTypeIdentifierBodyMass" source="Withings" unit="kg" startDate="20150616071908-0700" endDate="20150616071908-0700" Health Mate App Version="2.6.0" value="71.5"/>
            """))])
        #expect(report.added == 2 && report.rejected == 0, "\(report.files[0].warnings)")
        let fat = try #require(try t.samples().first { $0.type == "HKQuantityTypeIdentifierBodyFatPercentage" })
        #expect(fat.metadata.contains(MetadataEntry(key: "Health Mate App Version", value: "2.6.0")))
        #expect(fat.metadata.contains(MetadataEntry(key: "Withings User Identifier", value: "1234")))
        #expect(fat.metadata.contains(MetadataEntry(key: "Modified Date", value: "2015-06-16 14:19:08 +0000")))
    }

    /// iOS 8's aggregate rows (Sleep Cycle's heart rate: `min`, `max`, `average`, `recordCount`,
    /// no `value`, per second): the average is the value, in beats a minute; the rest is kept.
    @Test func anIOS8AggregateRowIsReadFromItsAverage() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("export.xml", export("""
            <Record type="HKQuantityTypeIdentifierHeartRate" source="Sleep Cycle" unit="count/s" startDate="20150101010000+0100" endDate="20150101070000+0100" min="0.85" max="1.2" average="1.05" recordCount="42"/>
            """))])
        #expect(report.added == 1 && report.rejected == 0, "\(report.files[0].warnings)")
        let rate = try #require(try t.samples().first)
        guard case .quantity(let bpm, let unit) = rate.value else { Issue.record("\(rate.value)"); return }
        #expect(unit == "count/min" && abs(bpm.double - 63) < 1e-9, "\(bpm)")
        #expect(Set(rate.metadata.map(\.key)).isSuperset(of: ["min", "max", "recordCount"]))
        #expect(try t.vault.summary(metric: "heart-rate", by: .day).map { ($0.value * 1e6).rounded() / 1e6 } == [63])
    }
}
