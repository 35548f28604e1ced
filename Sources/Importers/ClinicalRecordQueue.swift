import Foundation
import HealthModel
import VaultEvents

/// Clinical records of an export wait here while its XML is read: each names its FHIR resource
/// (`resourceFilePath="/clinical-records/Observation-….json"`), a file beside the XML that is
/// read afterwards and kept with the record, as it is, in its `resource` attribute.
///
/// Only files inside `clinical-records/` are read (never `..` or another folder). A record whose
/// file is missing, too large or not JSON is kept without it, and the import says how many.
final class ClinicalRecordQueue {
    /// FHIR resources are a few kilobytes; a file past this is not one.
    static let maximumResourceBytes = 8 << 20
    /// Records held at most; past this they go on without their resource (and are counted).
    static let maximumHeld = 100_000

    struct TooLarge: Error {}

    private var held: [GenericRecord] = []
    private var overflow = 0

    /// Takes a clinical record that names a resource file; false for anything else (emit it now).
    func hold(_ record: GenericRecord) -> Bool {
        guard record.element == "ClinicalRecord", Self.resourcePath(of: record) != nil else { return false }
        guard held.count < Self.maximumHeld else {
            overflow += 1
            return false
        }
        held.append(record)
        return true
    }

    /// `clinical-records/…json` from the record's `resourceFilePath`, when it names a file there.
    static func resourcePath(of record: GenericRecord) -> String? {
        guard let raw = record.attributes.first(where: { $0.key == "resourceFilePath" })?.value else { return nil }
        let parts = raw.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0] == "clinical-records", !parts.contains(".."), parts[1].lowercased().hasSuffix(".json") else { return nil }
        return parts.joined(separator: "/")
    }

    /// Emits every held record, with its resource when `read` finds it (nil: missing).
    func emit(into sink: ImportSink, missing place: String, read: (String) throws -> Data?) throws {
        var missing = 0, unreadable = 0
        for var record in held {
            let path = Self.resourcePath(of: record)!
            var data: Data?
            do {
                data = try read(path)
                if data == nil { missing += 1 }
            } catch let error as ImportError {
                throw error  // the zip itself is damaged: the import stops
            } catch {
                unreadable += 1
            }
            if let data {
                if (try? JSONSerialization.jsonObject(with: data)) != nil, let text = String(data: data, encoding: .utf8) {
                    record.attributes.append(MetadataEntry(key: "resource", value: text))
                } else {
                    unreadable += 1
                }
            }
            try sink.emit(.genericRecord(record))
        }
        held = []
        if missing > 0 { sink.warn("\(missing) clinical record file(s) named by ClinicalRecord elements are missing \(place); the records are kept without them") }
        if unreadable > 0 { sink.warn("\(unreadable) clinical record file(s) could not be read as FHIR JSON; the records are kept without them") }
        if overflow > 0 { sink.warn("\(overflow) clinical record(s) past \(Self.maximumHeld) kept without their files") }
    }
}
