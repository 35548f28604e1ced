import Envelope
import Foundation
import HealthModel
import ResearchBundle

/// `export --format`: the data files as the lines themselves (ndjson), or the same lines as
/// FHIR R4 Observations or Open mHealth data points, one per line, in
/// `data/<category>.fhir.ndjson` or `.omh.ndjson` (docs/bundle-format.md, "FHIR and Open
/// mHealth"; `StandardLineEncoder`).
public enum StandardFormat: String, CaseIterable, Sendable {
    case ndjson, fhir, omh

    /// The data file's name suffix.
    var suffix: String { self == .ndjson ? ".ndjson" : ".\(rawValue).ndjson" }
}

/// Writes `BundleLine`s as FHIR R4 Observations or Open mHealth data points. Each resource holds
/// the members the line's NDJSON holds (`members(of:)`), so both formats carry the same facts.
/// Ids are keyed by `salt` (the bundle's: sender and time) and the line's place and NDJSON bytes,
/// so two identical samples are two resources, a re-export of the same line in the same bundle
/// the same resource, and an id reveals nothing of the line to whoever sees it.
struct StandardLineEncoder {
    let format: StandardFormat
    let granularity: String
    /// When the bundle was made, stamped in Open mHealth headers.
    let created: String
    let salt: [UInt8]
    /// The line's NDJSON, which its id is made from.
    private var line = BundleLineWriter(format: .ndjson, figures: false)
    private var index = 0
    private(set) var bytes: [UInt8] = []

    init(format: StandardFormat, granularity: String, createdAt: Date, salt: [UInt8]) {
        self.format = format
        self.granularity = granularity
        created = ISO8601DateFormatter().string(from: createdAt)
        self.salt = salt
    }

    mutating func append(_ bundleLine: BundleLine) throws {
        line.append(bundleLine)
        let ndjson = line.take().dropLast()  // its newline
        let id = Self.uuid(Digest.of(salt + Array("\(granularity)\u{0}\(index)\u{0}".utf8) + Array(ndjson)).hex)
        let members = Self.members(of: bundleLine)
        let resource = format == .fhir ? Self.observation(members, id: id, granularity: granularity)
            : Self.dataPoint(members, id: id, granularity: granularity, created: created)
        // Every number is finite (`members` gives null for any other) and every key a string, so
        // serialization has nothing to refuse; if it ever did, the export fails rather than
        // leave the line out.
        bytes += try JSONSerialization.data(withJSONObject: resource, options: [.sortedKeys, .withoutEscapingSlashes])
        bytes.append(0x0A)
        index += 1
    }

    /// The line's members as its NDJSON object holds them: numbers as JSON reads their written
    /// form (a whole number without a point or exponent as an integer), null where the line
    /// writes null.
    static func members(of line: BundleLine) -> [String: Any] {
        func number(_ literal: String) -> Any {
            if literal == "null" { return NSNull() }
            if literal.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { return NSNumber(value: Double(literal) ?? .nan) }
            return Int64(literal).map { NSNumber(value: $0) } ?? NSNumber(value: Double(literal) ?? .nan)
        }
        var members: [String: Any] = [:]
        switch line {
        case .figure(let f):
            members = ["category": f.category, "metric": f.metric, "period": f.period, "unit": f.unit, "samples": NSNumber(value: f.samples),
                       "value": f.value.map { number(BundleLineWriter.number($0)) } ?? NSNull()]
            if let min = f.min, let max = f.max {
                members["min"] = number(BundleLineWriter.number(min))
                members["max"] = number(BundleLineWriter.number(max))
            }
        case .record(let r):
            members = ["category": r.category, "type": r.type, "start": r.start.map { $0.iso8601 as Any } ?? NSNull(),
                       "end": r.end.map { $0.iso8601 as Any } ?? NSNull(), "unit": r.unit.map { $0 as Any } ?? NSNull()]
            switch r.value {
            case .decimal(let d): members["value"] = number(BundleLineWriter.decimalText(d))
            case .text(let text): members["value"] = text
            case .none: members["value"] = NSNull()
            }
            if r.clipped { members["clipped"] = NSNumber(value: true) }
            for field in r.fields {
                switch field.value {
                case .number(let v): members[field.name] = number(BundleLineWriter.number(v))
                case .text(let text): members[field.name] = text
                case .object(let entries):
                    var object: [String: Any] = [:]
                    for entry in entries { object[entry.key] = entry.value }
                    members[field.name] = object
                case .thousandths(let values):
                    members[field.name] = values.map { number(BundleLineWriter.decimalText(DecimalValue(mantissa: $0, scale: 3))) }
                }
            }
        }
        return members
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
