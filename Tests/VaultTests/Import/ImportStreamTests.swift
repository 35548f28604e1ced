import Foundation
@testable import HealthModel
@testable import Importers
import Testing
import VaultEvents
import VaultTestSupport

/// The importers read bytes, not paths: a file and the same bytes from memory (a request's body)
/// give the same events, the same rejections and the same warnings.
@Suite struct ImportStreamTests {
    /// Keeps what an importer hands it.
    final class CollectingSink: ImportSink {
        var events: [VaultEvent] = []
        var rejected = 0
        var warnings: [String] = []
        func add(_ event: VaultEvent, nested: Bool) throws { events.append(event) }
        func reject(_ count: Int) { rejected += count }
        func warn(_ message: String) { warnings.append(message) }
    }

    /// A sink that fails as a full disk would.
    final class FailingSink: ImportSink {
        struct Full: Error, Equatable {}
        func add(_ event: VaultEvent, nested: Bool) throws { throw Full() }
        func reject(_ count: Int) {}
        func warn(_ message: String) {}
    }

    static let utc = TimeZone(identifier: "UTC")!

    func both(_ name: String, _ text: String) throws -> (file: CollectingSink, bytes: CollectingSink) {
        let dir = TemporaryDirectory("stream")
        let path = dir.path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let format = try ImportFormat.detect(path)
        #expect(try ImportFormat.detect(head: Array(text.utf8.prefix(512)), name: name) == format)
        let fromFile = CollectingSink(), fromBytes = CollectingSink()
        try Importer.importFile(path, format: format, into: fromFile, timeZone: Self.utc)
        try Importer.importStream(.bytes(Data(text.utf8), name: path), format: format, into: fromBytes, timeZone: Self.utc)
        return (fromFile, fromBytes)
    }

    @Test func companionJSONFromAFileAndFromABodyAreTheSame() throws {
        let (file, bytes) = try both("post.json", """
        {"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38},
                                  {"timeRange":"2025-08-06 09:00/2025-08-06 10:00","value":"x"}]}
        """)
        #expect(file.events.count == 1 && file.rejected == 1)
        #expect(file.events == bytes.events && file.rejected == bytes.rejected && file.warnings == bytes.warnings)
        guard case .sample(let s) = file.events[0] else { Issue.record("not a sample"); return }
        #expect(s.type == "HKQuantityTypeIdentifierStepCount" && s.value == .quantity(DecimalValue(mantissa: 38, scale: 0), unit: "count"))
    }

    @Test func csvAndXMLFromAFileAndFromABodyAreTheSame() throws {
        let csv = try both("rows.csv", "type,start,end,value\nsteps,2025-08-06 08:00,2025-08-06 09:00,38\nsteps,nope,2025-08-06 09:00,1\n")
        #expect(csv.file.events.count == 1 && csv.file.rejected == 1)
        #expect(csv.file.events == csv.bytes.events && csv.file.warnings == csv.bytes.warnings)
        let xml = try both("export.xml", """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_GB">
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:10:00 +0100" value="500"/>
        </HealthData>
        """)
        #expect(xml.file.events.count == 1 && xml.file.events == xml.bytes.events)
    }

    @Test func aBodyTooLargeOrAZipFromMemoryIsRefusedByName() throws {
        let big = Data(repeating: 0x20, count: CompanionJSONImporter.maxBytes + 1)
        #expect(throws: ImportError.unreadable(path: "POST /samples", reason: "larger than 64 MiB; split it")) {
            try Importer.importStream(.bytes(big, name: "POST /samples"), format: .companionJSON, into: CollectingSink(), timeZone: Self.utc)
        }
        #expect(throws: ImportError.unreadable(path: "upload", reason: "a zip archive must be imported from a file")) {
            try Importer.importStream(.bytes(Data([0x50, 0x4B, 3, 4]), name: "upload"), format: .appleHealthZip, into: CollectingSink(), timeZone: Self.utc)
        }
    }

    @Test func theSinksOwnErrorsComeThroughUntouched() throws {
        let text = "type,start,end,value\nsteps,2025-08-06 08:00,2025-08-06 09:00,38\n"
        #expect(throws: FailingSink.Full()) {
            try Importer.importStream(.bytes(Data(text.utf8), name: "rows.csv"), format: .csv, into: FailingSink(), timeZone: Self.utc)
        }
        let xml = """
        <HealthData><Record type="HKQuantityTypeIdentifierStepCount" sourceName="P" unit="count" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:10:00 +0100" value="5"/></HealthData>
        """
        #expect(throws: FailingSink.Full()) {
            try Importer.importStream(.bytes(Data(xml.utf8), name: "export.xml"), format: .appleHealthXML, into: FailingSink(), timeZone: Self.utc)
        }
    }
}

/// What a zip holds beside the export is named when it is not imported (issue 16).
@Suite struct ZipContentsTests {
    @Test func anEmptyExportXMLIsSaidToBeEmpty() throws {
        let t = try ImportTestVault()
        let zip = try t.zip("empty.zip", [("apple_health_export/export.xml", "")])
        #expect(throws: ImportError.notAnExport(path: zip + ":apple_health_export/export.xml", reason: "the export XML is empty")) {
            _ = try t.vault.importFiles([zip])
        }
    }

    @Test func cdaDocumentsAreNamedAndBrokenECGRecordingsRejectedNotSkippedSilently() throws {
        let t = try ImportTestVault()
        let zip = try t.zip("export.zip", [
            ("apple_health_export/export.xml", export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500"))),
            ("apple_health_export/export_cda.xml", "<ClinicalDocument/>"),
            ("apple_health_export/electrocardiograms/ecg_2024-01-01.csv", "Name,Anna\n"),
        ])
        let report = try t.vault.importFiles([zip])
        #expect(report.added == 1 && report.rejected == 1)
        #expect(report.files[0].warnings.contains("1 CDA document(s) (export_cda.xml) not imported: they repeat the export's records in another format"))
        #expect(report.files[0].warnings.contains("ECG recording \(zip):apple_health_export/electrocardiograms/ecg_2024-01-01.csv rejected: no recorded date in the header (line 1)"))
    }
}
