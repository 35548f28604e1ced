import Foundation
@testable import HealthModel
@testable import Importers
import Testing
@testable import Vault

/// Records usually repeat the source attributes of one of the last few records; the importer then
/// reuses that record's source instead of decoding it again (`ParsedSource`). Whatever it reuses
/// must be what decoding would have given.
@Suite struct RepeatedSourceTests {
    @Test func controlCharactersAreCountedForEveryRecordThatRepeatsASource() throws {
        let t = try ImportTestVault()
        let source = "Jo\u{0B}’s iPhone"
        let records = ["10", "11", "12"].map { minute in
            stepRecord("2024-01-01 10:\(minute):00 +0100", "2024-01-01 10:\(minute):30 +0100", "5\(minute)", source: source)
        }
        let report = try t.vault.importFiles([t.write("export.xml", export(records.joined(separator: "\n")))])
        #expect(report.added == 3)
        // One record alone removes 2 (ImportDamageTests): three remove 6.
        #expect(report.files[0].warnings == ["6 control character(s) removed from attribute values"])
        #expect(try t.samples().map(\.source.name) == ["Jo’s iPhone", "Jo’s iPhone", "Jo’s iPhone"])
    }

    @Test func aSourceDifferingInAnyAttributeIsReadAgain() throws {
        let t = try ImportTestVault()
        func record(_ minute: Int, name: String = "Watch", version: String? = "10.2", address: String = "0x2813", model: String = "Watch") -> String {
            let versionAttribute = version.map { " sourceVersion=\"\($0)\"" } ?? ""
            return """
                <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="\(name)"\(versionAttribute) device="&lt;&lt;HKDevice: \(address)&gt;, name:Apple Watch, manufacturer:Apple Inc., model:\(model), hardware:Watch6,7, software:10.2&gt;" unit="count/min" startDate="2024-05-01 08:0\(minute):00 +0200" endDate="2024-05-01 08:0\(minute):00 +0200" value="6\(minute)"/>
                """
        }
        let records = [
            record(0),
            record(1, address: "0x9999"),  // only the object address differs: the same source
            record(2, version: "10.3"),
            record(3, version: nil),
            record(4, name: "Watch 2", version: nil),
            record(5, name: "Watch 2", version: nil, model: "Watch7"),
            record(6),
        ]
        _ = try t.vault.importFiles([t.write("export.xml", export(records.joined(separator: "\n")))])
        let sources = try t.samples().sorted { $0.start.seconds < $1.start.seconds }.map(\.source)
        let watch = HealthDevice(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardware: "Watch6,7", software: "10.2")
        var watch7 = watch
        watch7.model = "Watch7"
        #expect(sources == [
            HealthSource(name: "Watch", version: "10.2", device: watch),
            HealthSource(name: "Watch", version: "10.2", device: watch),
            HealthSource(name: "Watch", version: "10.3", device: watch),
            HealthSource(name: "Watch", version: nil, device: watch),
            HealthSource(name: "Watch 2", version: nil, device: watch),
            HealthSource(name: "Watch 2", version: nil, device: watch7),
            HealthSource(name: "Watch", version: "10.2", device: watch),
        ])
    }

    @Test func interleavedSourcesAreHandedOutAsTheSameInstances() throws {
        func record(_ minute: Int, name: String) -> String {
            """
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="\(name)" unit="count" startDate="2024-05-01 08:0\(minute):00 +0200" endDate="2024-05-01 08:0\(minute):30 +0200" value="1\(minute)"/>
            """
        }
        let names = ["Phone", "Watch", "Phone", "Watch", "Ring", "Scale", "Band", "Phone"]
        let xml = export(names.enumerated().map { record($0.offset, name: $0.element) }.joined(separator: "\n"))
        let (events, rejected) = try ImportFuzzTests.parse(Array(xml.utf8), chunks: [1 << 20])
        let sources = events.compactMap { event -> HealthSource? in
            if case .sample(let sample) = event { return sample.source } else { return nil }
        }
        #expect(rejected == 0)
        #expect(sources.map(\.name) == names)
        // The phone's and the watch's records reuse the instance they first made...
        #expect(sources[2].isIdentical(to: sources[0]))
        #expect(sources[3].isIdentical(to: sources[1]))
        #expect(!sources[1].isIdentical(to: sources[0]))
        // ...and a source five sources back (four are kept) is read again: equal, not the same.
        #expect(sources[7] == sources[0])
        #expect(!sources[7].isIdentical(to: sources[0]))
    }
}
