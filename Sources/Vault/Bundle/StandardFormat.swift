import Envelope
import Foundation
import HealthModel

/// `export --format fhir|omh`: a bundle's lines written as FHIR R4 Observations or Open mHealth
/// data points, one per line, in `data/<category>.fhir.ndjson` or `.omh.ndjson`
/// (docs/bundle-format.md, "FHIR and Open mHealth"). Each is made from the line the ndjson
/// format would hold, so both carry the same facts; an id derived from the line's bytes makes a
/// re-export of the same line the same resource.
public enum StandardFormat: String, CaseIterable, Sendable {
    case ndjson, fhir, omh

    /// The data file's name suffix.
    var suffix: String { self == .ndjson ? ".ndjson" : ".\(rawValue).ndjson" }

    /// `lines` (ndjson, one object per line) converted; `createdAt` stamps OMH headers. Ids are
    /// keyed by `salt` (the bundle's: sender and time) and the line's place, so two identical
    /// samples are two resources and an id reveals nothing of the line to whoever sees it.
    func convert(_ lines: [UInt8], granularity: String, createdAt: Date, salt: [UInt8]) throws -> [UInt8] {
        guard self != .ndjson else { return lines }
        var out: [UInt8] = []
        let created = ISO8601DateFormatter().string(from: createdAt)
        for (index, line) in lines.split(separator: 0x0A).enumerated() {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            let id = Self.uuid(Digest.of(salt + Array("\(granularity)\u{0}\(index)\u{0}".utf8) + Array(line)).hex)
            let converted = self == .fhir ? Self.observation(object, id: id, granularity: granularity)
                : Self.dataPoint(object, id: id, granularity: granularity, created: created)
            out += try JSONSerialization.data(withJSONObject: converted, options: [.sortedKeys, .withoutEscapingSlashes])
            out.append(0x0A)
        }
        return out
    }

    /// A UUID-shaped id from the first 32 hex digits of a hash.
    static func uuid(_ hex: String) -> String {
        let h = Array(hex.prefix(32))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(h[$0]) }.joined(separator: "-")
    }

    /// The type or metric a line is about, and whether it is a figure for a period.
    private static func subject(_ line: [String: Any]) -> (name: String, aggregate: Bool) {
        if let metric = line["metric"] as? String { return (metric, true) }
        return (line["type"] as? String ?? "", false)
    }

    static func observation(_ line: [String: Any], id: String, granularity: String) -> [String: Any] {
        let (name, aggregate) = subject(line)
        let category = line["category"] as? String ?? ""
        var coding: [[String: Any]] = []
        if let loinc = StandardCodes.loinc(type: name, daily: aggregate && granularity == "daily") {
            coding.append(["system": "http://loinc.org", "code": loinc.code, "display": loinc.display])
        }
        coding.append(["system": "urn:healthvault:type", "code": name])
        var resource: [String: Any] = [
            "resourceType": "Observation", "id": id, "status": "final",
            "category": [["coding": [["system": "urn:healthvault:category", "code": category]]]],
            "code": ["coding": coding, "text": name],
        ]
        if aggregate, let period = line["period"] as? String {
            // A local day: the person's clock, without an offset the line does not carry (FHIR
            // allows a date alone; an hour goes in an extension, as a time would need a zone).
            resource["effectiveDateTime"] = String(period.prefix(10))
            var extensions: [[String: Any]] = [["url": "urn:healthvault:granularity", "valueCode": granularity]]
            if period.count > 10 { extensions.append(["url": "urn:healthvault:local-hour", "valueString": String(period.dropFirst(11))]) }
            resource["extension"] = extensions
        } else if let start = line["start"] as? String, let end = line["end"] as? String {
            if start == end { resource["effectiveDateTime"] = start } else { resource["effectivePeriod"] = ["start": start, "end": end] }
        }
        let unit = line["unit"] as? String
        if let value = line["value"] as? NSNumber {
            if let unit {
                resource["valueQuantity"] = ["value": Self.percent(value, unit: unit), "unit": unit, "system": "http://unitsofmeasure.org",
                                             "code": StandardCodes.ucum(unit, type: name)]
            } else {
                resource["valueQuantity"] = ["value": value]  // a tracker's level: a number without a unit
            }
        } else if let text = line["value"] as? String {
            resource["valueCodeableConcept"] = ["text": text]
        }
        var components: [[String: Any]] = []
        for key in ["min", "max"] {
            if let v = line[key] as? NSNumber, let unit {
                components.append(["code": ["coding": [["system": "urn:healthvault:statistic", "code": key]]],
                                   "valueQuantity": ["value": Self.percent(v, unit: unit), "unit": unit, "system": "http://unitsofmeasure.org", "code": StandardCodes.ucum(unit, type: name)]])
            }
        }
        if !components.isEmpty { resource["component"] = components }
        // Whatever else the line holds (samples behind a figure, a route point's coordinates, a
        // record's attributes) travels as extensions, named by its member.
        let known: Set<String> = ["category", "type", "metric", "period", "start", "end", "value", "unit", "min", "max"]
        var extensions = resource["extension"] as? [[String: Any]] ?? []
        for (key, value) in line.sorted(by: { $0.key < $1.key }) where !known.contains(key) {
            extensions.append(["url": "urn:healthvault:field:\(key)", "valueString": Self.text(value)])
        }
        if !extensions.isEmpty { resource["extension"] = extensions }
        return resource
    }

    static func dataPoint(_ line: [String: Any], id: String, granularity: String, created: String) -> [String: Any] {
        let (name, aggregate) = subject(line)
        // An omh schema for numbers only: a sleep stage (a category value) is no sleep duration.
        let schema = line["value"] is NSNumber ? StandardCodes.omh(type: name) : nil
        var body: [String: Any] = [:]
        let unit = line["unit"] as? String ?? ""
        if let value = line["value"] as? NSNumber {
            if let schema {
                let omhUnit = unit == "count/min" || unit == "count" ? schema.unit : unit == "degC" ? "C" : unit
                let number = Self.percent(value, unit: unit)
                body[schema.member] = schema.bare ? number : ["value": number, "unit": omhUnit]
            } else {
                body["value"] = value
                body["unit"] = unit
            }
        } else if let text = line["value"] as? String {
            body["value"] = text
        }
        if aggregate, let period = line["period"] as? String {
            body["effective_time_frame"] = ["time_interval": ["start_date_time": period.count == 10 ? period + "T00:00:00" : period + ":00:00",
                                                              "duration": ["value": 1, "unit": period.count == 10 ? "d" : "h"]]]
            // A day's minutes of workouts or sleep stages and a day's repetitions are sums too.
            let summed = AggregationStyle.of(type: name) == .cumulative || ["workout:", "exercise:", "sleep:"].contains { name.hasPrefix($0) }
            body["descriptive_statistic"] = summed ? "sum" : "average"
        } else if let start = line["start"] as? String, let end = line["end"] as? String {
            body["effective_time_frame"] = start == end ? ["date_time": start] : ["time_interval": ["start_date_time": start, "end_date_time": end]]
        }
        let known: Set<String> = ["category", "type", "metric", "period", "start", "end", "value", "unit"]
        for (key, value) in line where !known.contains(key) { body["healthvault_\(key)"] = value }
        return [
            "header": [
                "uuid": id, "creation_date_time": created,
                "schema_id": schema.map { ["namespace": "omh", "name": $0.name, "version": $0.version] }
                    ?? ["namespace": "healthvault", "name": name, "version": "1.0"],
                "acquisition_provenance": ["source_name": "healthvault", "modality": "sensed"],
            ],
            "body": body,
        ]
    }

    /// HealthKit keeps percentages as fractions (body fat 0.161 `%`); FHIR's UCUM `%` and Open
    /// mHealth's mean percent points.
    static func percent(_ value: NSNumber, unit: String) -> NSNumber {
        unit == "%" ? NSNumber(value: (value.doubleValue * 100 * 1e9).rounded() / 1e9) : value
    }

    private static func text(_ value: Any) -> String {
        if let s = value as? String { return s }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }
}
