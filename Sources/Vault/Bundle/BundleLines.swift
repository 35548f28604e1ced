import Foundation
import HealthModel
import Projections
import ResearchBundle

/// The NDJSON and CSV lines of bundle data files (shapes in docs/cli.md).
struct BundleLines {
    private(set) var ndjson: [UInt8] = []
    private(set) var csv: [UInt8] = []
    private(set) var count = 0
    let withCSV: Bool
    let aggregated: Bool

    init(withCSV: Bool, aggregated: Bool) {
        self.withCSV = withCSV
        self.aggregated = aggregated
        if withCSV {
            csv += Array((aggregated ? "category,metric,period,value,unit,min,max,samples\n" : "category,type,start,end,value,unit,clipped\n").utf8)
        }
    }

    /// A raw line: one sample or record as recorded, or its part inside the data period with
    /// `"clipped":true`. Written byte by byte: a year of samples is hundreds of thousands of lines.
    /// A record without a quantity of its own (a route point, a `Me` characteristic, a clinical
    /// record, a correlation) carries what it holds in `fields`, after the common ones; undated
    /// records have null `start` and `end`.
    mutating func raw(category: String, type: String, start: HealthTimestamp?, end: HealthTimestamp?, value: RawValue, unit: String?,
                      clipped: Bool = false, fields: [(String, Field)] = []) {
        ndjson += Self.literal("{\"category\":")
        appendJSON(category)
        ndjson += Self.literal(",\"type\":")
        appendJSON(type)
        for (name, t) in [("start", start), ("end", end)] {
            ndjson += Array(",\"\(name)\":".utf8)
            if let t {
                ndjson.append(0x22)
                t.appendISO8601(to: &ndjson)
                ndjson.append(0x22)
            } else {
                ndjson += Self.literal("null")
            }
        }
        ndjson += Self.literal(",\"value\":")
        switch value {
        case .decimal(let d): Self.appendDecimal(d, to: &ndjson)
        case .text(let text): appendJSON(text)
        case .none: ndjson += Self.literal("null")
        }
        ndjson += Self.literal(",\"unit\":")
        if let unit { appendJSON(unit) } else { ndjson += Self.literal("null") }
        if clipped { ndjson += Self.literal(",\"clipped\":true") }
        for (name, field) in fields {
            ndjson.append(0x2C)
            appendJSON(name)
            ndjson.append(0x3A)
            switch field {
            case .number(let v): ndjson += Array(Self.number(v).utf8)
            case .text(let text): appendJSON(text)
            case .object(let entries):
                ndjson.append(0x7B)
                for (i, entry) in entries.enumerated() {
                    if i > 0 { ndjson.append(0x2C) }
                    ndjson += Array(Self.json(entry.key).utf8)
                    ndjson.append(0x3A)
                    ndjson += Array(Self.json(entry.value).utf8)
                }
                ndjson.append(0x7D)
            case .thousandths(let values):
                ndjson.append(0x5B)
                for (i, v) in values.enumerated() {
                    if i > 0 { ndjson.append(0x2C) }
                    Self.appendDecimal(DecimalValue(mantissa: v, scale: 3), to: &ndjson)
                }
                ndjson.append(0x5D)
            }
        }
        ndjson += Self.literal("}\n")
        if withCSV {
            let valueText: String
            switch value {
            case .text(let text): valueText = text
            case .decimal(let d):
                var bytes: [UInt8] = []
                Self.appendDecimal(d, to: &bytes)
                valueText = String(decoding: bytes, as: UTF8.self)
            case .none: valueText = ""
            }
            let columns = [category, type, start.map(Self.isoDate) ?? "", end.map(Self.isoDate) ?? "", valueText, unit ?? "", clipped ? "true" : ""]
            csv += Array((columns.map(Self.csvField).joined(separator: ",") + "\n").utf8)
        }
        count += 1
    }

    private var jsonCache: [String: [UInt8]] = [:]

    /// Strings that repeat (categories, types, units, category values) are escaped once.
    private mutating func appendJSON(_ text: String) {
        if let cached = jsonCache[text] { ndjson += cached; return }
        let bytes = Array(Self.json(text).utf8)
        if jsonCache.count < 10_000 { jsonCache[text] = bytes }
        ndjson += bytes
    }

    private static func literal(_ text: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// The exact decimal as the export wrote it (`12.50` stays `12.50`), else the double.
    static func appendDecimal(_ d: DecimalValue, to out: inout [UInt8]) {
        guard d.exact else { out += Array(number(d.double).utf8); return }
        var digits = Array(String(d.mantissa.magnitude).utf8)
        if d.mantissa < 0 { out.append(0x2D) }
        let scale = Int(d.scale)
        if scale == 0 { out += digits; return }
        if digits.count <= scale { digits = [UInt8](repeating: 0x30, count: scale - digits.count + 1) + digits }
        out += digits[..<(digits.count - scale)]
        out.append(0x2E)
        out += digits[(digits.count - scale)...]
    }

    enum RawValue {
        case decimal(DecimalValue)
        case text(String)
        case none
    }

    /// A field a record adds to the common ones (NDJSON only; CSV keeps the common columns).
    enum Field {
        case number(Double)
        case text(String)
        /// Keys and values as the record holds them (attributes, metadata).
        case object([MetadataEntry])
        /// Exact thousandths, written as decimals (an ECG's voltages).
        case thousandths([Int64])
    }

    /// Fewer readings than this in a period and a discrete metric's line carries no `min` and
    /// `max`: with one or two readings they are the readings themselves, and with three the
    /// average gives the third (3 × average − min − max). With four, two stay unknown.
    static let minimumReadingsForRange = 4

    /// An aggregated line: a metric's figure for a period.
    mutating func aggregate(category: String, metric: String, period: String, value: Double, unit: String, min: Double?, max: Double?, samples: Int) {
        let range = samples >= Self.minimumReadingsForRange
        let value = Self.micro(value), min = range ? min.map(Self.micro) : nil, max = range ? max.map(Self.micro) : nil
        var line = "{\"category\":\(Self.json(category)),\"metric\":\(Self.json(metric)),\"period\":\"\(period)\",\"value\":\(Self.number(value)),\"unit\":\(Self.json(unit))"
        if let min, let max { line += ",\"min\":\(Self.number(min)),\"max\":\(Self.number(max))" }
        line += ",\"samples\":\(samples)}\n"
        ndjson += Array(line.utf8)
        if withCSV {
            let fields = [category, metric, period, Self.number(value), unit, min.map(Self.number) ?? "", max.map(Self.number) ?? "", String(samples)]
            csv += Array((fields.map(Self.csvField).joined(separator: ",") + "\n").utf8)
        }
        count += 1
    }

    /// Aggregates to a millionth of their unit: no float noise from summing in the last bits.
    static func micro(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }

    /// Numbers as JSON: shortest round-trip form, integers without a fraction.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// `2024-01-01T08:00:00+01:00` in the sample's own offset.
    static func isoDate(_ t: HealthTimestamp) -> String { t.iso8601 }


    /// A JSON string literal.
    static func json(_ text: String) -> String { JSONText.literal(text) }

    /// An RFC 4180 field. A text that a spreadsheet would run as a formula (starting with `=`, `+`,
    /// `-`, `@`, a tab or a carriage return, and not a plain number) gets a leading `'`, as OWASP
    /// advises for CSV injection: a source or category value named `=HYPERLINK(...)` stays text.
    static func csvField(_ text: String) -> String {
        var text = text
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Double(text) == nil {
            text = "'" + text
        }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
