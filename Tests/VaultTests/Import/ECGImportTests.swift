import Foundation
@testable import HealthModel
import Importers
import Testing
import VaultTestSupport
@testable import Vault

/// ECG recordings (issue 16): read from an export's `electrocardiograms/` or given alone, kept with
/// their header and exact voltages under heart, listed by `types`, shared under heart, erased
/// with heart's month.
@Suite struct ECGImportTests {
    /// Apple's layout, as real recordings have it: a bare `Name` when there is none, a quoted
    /// birth date with a comma, blank lines inside the header.
    static let recording = """
        Name
        Date of Birth,"Jan 1, 1980"
        Recorded Date,2024-05-01 08:12:03 +0200
        Classification,Sinus Rhythm
        Symptoms,
        Software Version,2
        Device,"Watch6,2"
        Sample Rate,512 hertz


        Lead,Lead I
        Unit,µV

        -93.456
        -94.1
        12
        0.005

        """

    @Test func aRecordingInAZipIsKeptWithItsHeaderAndExactVoltages() throws {
        let t = try ImportTestVault()
        let zip = try t.zip("export.zip", [
            ("apple_health_export/export.xml", export(stepRecord("2024-05-01 10:00:00 +0200", "2024-05-01 10:10:00 +0200", "500"))),
            ("apple_health_export/electrocardiograms/ecg_2024-05-01.csv", Self.recording),
        ])
        let first = try t.vault.importFiles([zip])
        #expect(first.added == 2 && first.rejected == 0)
        #expect(try t.vault.importFiles([zip]).added == 0)
        let ecgs = try t.dataEvents().compactMap { if case .electrocardiogram(let e) = $0 { e } else { nil } }
        #expect(ecgs.count == 1)
        let e = ecgs[0]
        #expect(e.recorded.iso8601 == "2024-05-01T08:12:03+02:00" && e.sampleRate == 512 && e.unit == "µV")
        #expect(e.millivoltages == [-93456, -94100, 12000, 5])
        #expect(e.fields.map(\.key) == ["Recorded Date", "Classification", "Symptoms", "Software Version", "Device", "Sample Rate", "Lead", "Unit"])
        #expect(e.field("Device") == "Watch6,2" && e.field("Classification") == "Sinus Rhythm")
        // The person's name and birth date are not kept: a recording that names the person
        // (`Name,Jane Roe`) gives the same event, with neither in it.
        #expect(!"\(e)".contains("1980"))
        let named = try ImportTestVault()
        _ = try named.vault.importFiles([named.write("ecg_named.csv", Self.recording.replacingOccurrences(of: "Name\n", with: "Name,Jane Roe\n"))])
        let namedECG = try #require(try named.dataEvents().compactMap { if case .electrocardiogram(let e) = $0 { e } else { nil } }.first)
        #expect(namedECG == e && !"\(namedECG)".contains("Jane") && !"\(namedECG)".contains("1980"))
        #expect(try t.vault.heldTypes().contains { $0.type == "HKElectrocardiogramType" && $0.category == .heart && $0.count == 1 })

        let shared = try SharedLines(t)
        let lines = try shared.export([.heart], from: nil, to: nil).lines(.heart)
        #expect(lines.count == 1)
        #expect(lines[0]["type"] as? String == "HKElectrocardiogramType" && lines[0]["value"] as? String == "Sinus Rhythm"
                && lines[0]["unit"] as? String == "µV" && lines[0]["sampleRate"] as? Double == 512
                && lines[0]["start"] as? String == "2024-05-01T08:12:03+02:00")
        #expect((lines[0]["voltages"] as? [Double]) == [-93.456, -94.1, 12, 0.005])

        _ = try t.vault.erase(categories: [.heart], from: LocalMonth(year: 2024, month: 5), to: LocalMonth(year: 2024, month: 5))
        #expect(try t.dataEvents().allSatisfy { if case .electrocardiogram = $0 { false } else { true } })
        #expect(try !t.vault.heldTypes().contains { $0.type == "HKElectrocardiogramType" })
    }

    @Test func aRecordingGivenAloneIsReadAndABrokenOneIsRejectedWithItsLine() throws {
        let t = try ImportTestVault()
        let alone = t.write("ecg_2024-05-01.csv", Self.recording)
        let report = try t.vault.importFiles([alone])
        #expect(report.files[0].format == "apple-health-ecg" && report.added == 1)
        let broken = t.write("ecg_2024-05-02.csv", Self.recording.replacingOccurrences(of: "2024-05-01 08", with: "2024-05-02 08")
            .replacingOccurrences(of: "12\n", with: "twelve\n"))
        // Its one recording refused, the file is: nothing of the command is kept, the reason said.
        #expect(throws: ImportError.nothingImportable(path: broken, rejected: 1, reasons: ["ECG recording \(broken) rejected: not a voltage (line 16)"])) {
            try t.vault.importFiles([broken])
        }
    }
}

/// Crafted ECG files are rejected alone and cannot break the vault (review findings).
@Suite struct ECGHostileInputTests {
    @Test func anImplausibleSampleRateIsLeftOutAndAnOversizedFileIsRejectedAlone() throws {
        let t = try ImportTestVault()
        let tiny = t.write("ecg_tiny.csv", ECGImportTests.recording.replacingOccurrences(of: "512 hertz", with: "0.00000000000000000001 hertz"))
        let huge = t.write("ecg_huge.csv", ECGImportTests.recording + String(repeating: "1\n", count: 9 << 20))
        let steps = t.write("steps.xml", export(stepRecord("2024-05-01 10:00:00 +0200", "2024-05-01 10:10:00 +0200", "500")))
        #expect(throws: ImportError.nothingImportable(path: huge, rejected: 1, reasons: ["ECG recording \(huge) rejected: larger than 16 MiB (line 1)"])) {
            try t.vault.importFiles([tiny, huge, steps])
        }
        let report = try t.vault.importFiles([tiny, steps])
        #expect(report.added == 2 && report.rejected == 0)
        let ecg = try t.dataEvents().compactMap { if case .electrocardiogram(let e) = $0 { e } else { nil } }
        #expect(ecg.count == 1 && ecg[0].sampleRate == nil && ecg[0].end == ecg[0].recorded)
        #expect(try t.vault.heldTypes().contains { $0.type == "HKElectrocardiogramType" })
    }
}

/// Clinical records keep their FHIR resource (issue 16): the JSON file a `ClinicalRecord` names in
/// `clinical-records/` is read from the zip and kept as it is; a missing or broken one is said.
@Suite struct ClinicalRecordTests {
    static func record(_ id: String, path: String) -> String {
        "<ClinicalRecord type=\"HKClinicalTypeIdentifierLabResultRecord\" identifier=\"\(id)\" sourceName=\"Clinic\" fhirVersion=\"4.0.1\" receivedDate=\"2024-05-05 09:00:00 +0200\" resourceFilePath=\"\(path)\"/>"
    }

    static let observation = #"{"resourceType":"Observation","id":"a1","status":"final","code":{"coding":[{"system":"http://loinc.org","code":"2345-7"}]},"valueQuantity":{"value":99,"unit":"mg/dL"}}"#

    @Test func aRecordsResourceIsReadFromTheZipAndKeptAsItIs() throws {
        let t = try ImportTestVault()
        let zip = try t.zip("export.zip", [
            ("apple_health_export/export.xml", export([
                Self.record("a1", path: "/clinical-records/Observation-a1.json"),
                Self.record("a2", path: "/clinical-records/Observation-a2.json"),
                Self.record("a3", path: "/clinical-records/Observation-a3.json"),
                Self.record("a4", path: "/clinical-records/../export.xml"),
            ].joined(separator: "\n"))),
            ("apple_health_export/clinical-records/Observation-a1.json", Self.observation),
            ("apple_health_export/clinical-records/Observation-a3.json", "{not json"),
        ])
        let report = try t.vault.importFiles([zip]).files[0]
        #expect(report.added == 4)
        #expect(report.warnings.contains("1 clinical record file(s) named by ClinicalRecord elements are missing from the zip; the records are kept without them"))
        #expect(report.warnings.contains("1 clinical record file(s) could not be read as FHIR JSON; the records are kept without them"))
        let records = try t.dataEvents().compactMap { if case .genericRecord(let g) = $0 { g } else { nil } }
        let resources = Dictionary(uniqueKeysWithValues: records.map { r in
            (r.attributes.first { $0.key == "identifier" }!.value, r.attributes.first { $0.key == "resource" }?.value)
        })
        #expect(resources == ["a1": Self.observation, "a2": nil, "a3": nil, "a4": nil])
        #expect(try t.vault.importFiles([zip]).added == 0)
        // The export's XML alone afterwards (no resources beside it): the same records, nothing added.
        let xmlAlone = t.write("export.xml", export([
            Self.record("a1", path: "/clinical-records/Observation-a1.json"),
            Self.record("a2", path: "/clinical-records/Observation-a2.json"),
        ].joined(separator: "\n")))
        let alone = try t.vault.importFiles([xmlAlone])
        #expect(alone.added == 0 && alone.duplicates == 2)
        // Shared under clinical with the resource in its attributes.
        let lines = try SharedLines(t).export([.clinical], from: nil, to: nil).lines(.clinical)
        let a1 = try #require(lines.first { ($0["attributes"] as? [String: String])?["identifier"] == "a1" })
        #expect((a1["attributes"] as? [String: String])?["resource"] == Self.observation)
    }
}
