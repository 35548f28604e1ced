import Foundation
import HealthModel
import Projections

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
    mutating func raw(category: String, type: String, start: HealthTimestamp, end: HealthTimestamp, value: RawValue, unit: String?,
                      clipped: Bool = false) {
        ndjson += Self.literal("{\"category\":")
        appendJSON(category)
        ndjson += Self.literal(",\"type\":")
        appendJSON(type)
        ndjson += Self.literal(",\"start\":\"")
        Self.appendISODate(start, to: &ndjson)
        ndjson += Self.literal("\",\"end\":\"")
        Self.appendISODate(end, to: &ndjson)
        ndjson += Self.literal("\",\"value\":")
        switch value {
        case .decimal(let d): Self.appendDecimal(d, to: &ndjson)
        case .text(let text): appendJSON(text)
        case .none: ndjson += Self.literal("null")
        }
        ndjson += Self.literal(",\"unit\":")
        if let unit { appendJSON(unit) } else { ndjson += Self.literal("null") }
        if clipped { ndjson += Self.literal(",\"clipped\":true") }
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
            csv += Array(([category, type, Self.isoDate(start), Self.isoDate(end), valueText, unit ?? "", clipped ? "true" : ""].map(Self.csvField).joined(separator: ",") + "\n").utf8)
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

    /// `2024-01-01T08:00:00+01:00`, appended.
    static func appendISODate(_ t: HealthTimestamp, to out: inout [UInt8]) {
        let local = t.seconds + Int64(t.utcOffset)
        let dayNumber = LocalDay.floorDivide(local, 86_400)
        let (y, m, d) = LocalDay.civil(fromDays: dayNumber)
        let second = local - dayNumber * 86_400
        func put(_ v: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = v
            while divisor > 0 {
                out.append(0x30 + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        if y < 0 || y > 9999 { out += Array(String(y).utf8) } else { put(y, 4) }
        out.append(0x2D); put(m, 2); out.append(0x2D); put(d, 2)
        out.append(0x54); put(second / 3600, 2); out.append(0x3A); put(second / 60 % 60, 2); out.append(0x3A); put(second % 60, 2)
        let offset = Int64(t.utcOffset)
        out.append(offset < 0 ? 0x2D : 0x2B)
        put(abs(offset) / 3600, 2); out.append(0x3A); put(abs(offset) / 60 % 60, 2)
    }

    enum RawValue {
        case decimal(DecimalValue)
        case text(String)
        case none
    }

    /// Fewer readings than this in a period and a discrete metric's line carries no `min` and
    /// `max`: with one or two readings they are the readings themselves.
    static let minimumReadingsForRange = 3

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
    static func isoDate(_ t: HealthTimestamp) -> String {
        var out: [UInt8] = []
        appendISODate(t, to: &out)
        return String(decoding: out, as: UTF8.self)
    }


    /// A JSON string literal.
    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

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
