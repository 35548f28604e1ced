import Foundation
import HealthModel

/// Writes `BundleLine`s as a data file's NDJSON or CSV (shapes in docs/cli.md and
/// docs/bundle-format.md), one line at a time. NDJSON is written byte by byte: a year of raw
/// samples is hundreds of thousands of lines. `BundleLineReader` reads the NDJSON back into the
/// same lines.
public struct BundleLineWriter {
    public enum Format: Sendable { case ndjson, csv }

    public let format: Format
    /// The file's bytes so far.
    public private(set) var bytes: [UInt8] = []
    /// Lines written (a CSV's header is not one).
    public private(set) var count = 0
    /// Strings that repeat (categories, types, units, category values) are escaped once.
    private var jsonCache: [String: [UInt8]] = [:]

    /// `figures`: whether the file holds daily or hourly figures (a CSV's header names their
    /// columns) or raw lines.
    public init(format: Format, figures: Bool) {
        self.format = format
        if format == .csv {
            bytes += Array((figures ? "category,metric,period,value,unit,min,max,samples\n" : "category,type,start,end,value,unit,clipped\n").utf8)
        }
    }

    public mutating func append(_ line: BundleLine) {
        switch (format, line) {
        case (.ndjson, .record(let record)): appendNDJSON(record)
        case (.ndjson, .figure(let figure)): appendNDJSON(figure)
        case (.csv, .record(let record)): appendCSV(record)
        case (.csv, .figure(let figure)): appendCSV(figure)
        }
        count += 1
    }

    /// The bytes written so far, handed over and cleared; the cache of escaped strings stays.
    public mutating func take() -> [UInt8] {
        var out: [UInt8] = []
        swap(&out, &bytes)
        return out
    }

    // MARK: NDJSON

    private mutating func appendNDJSON(_ line: RecordLine) {
        bytes += Self.literal("{\"category\":")
        appendJSON(line.category)
        bytes += Self.literal(",\"type\":")
        appendJSON(line.type)
        bytes += Self.literal(",\"start\":")
        appendTime(line.start)
        bytes += Self.literal(",\"end\":")
        appendTime(line.end)
        bytes += Self.literal(",\"value\":")
        switch line.value {
        case .decimal(let d): Self.appendDecimal(d, to: &bytes)
        case .text(let text): appendJSON(text)
        case .none: bytes += Self.literal("null")
        }
        bytes += Self.literal(",\"unit\":")
        if let unit = line.unit { appendJSON(unit) } else { bytes += Self.literal("null") }
        if line.clipped { bytes += Self.literal(",\"clipped\":true") }
        for field in line.fields {
            bytes.append(0x2C)
            appendJSON(field.name)
            bytes.append(0x3A)
            switch field.value {
            case .number(let v): bytes += Array(Self.number(v).utf8)
            case .text(let text): appendJSON(text)
            case .object(let entries):
                bytes.append(0x7B)
                for (i, entry) in entries.enumerated() {
                    if i > 0 { bytes.append(0x2C) }
                    bytes += Array(JSONText.literal(entry.key).utf8)
                    bytes.append(0x3A)
                    bytes += Array(JSONText.literal(entry.value).utf8)
                }
                bytes.append(0x7D)
            case .thousandths(let values):
                bytes.append(0x5B)
                for (i, v) in values.enumerated() {
                    if i > 0 { bytes.append(0x2C) }
                    Self.appendDecimal(DecimalValue(mantissa: v, scale: 3), to: &bytes)
                }
                bytes.append(0x5D)
            }
        }
        bytes += Self.literal("}\n")
    }

    private mutating func appendNDJSON(_ line: AggregateLine) {
        bytes += Self.literal("{\"category\":")
        appendJSON(line.category)
        bytes += Self.literal(",\"metric\":")
        appendJSON(line.metric)
        bytes += Self.literal(",\"period\":")
        appendJSON(line.period)
        bytes += Self.literal(",\"value\":")
        bytes += Array((line.value.map(Self.number) ?? "null").utf8)
        bytes += Self.literal(",\"unit\":")
        appendJSON(line.unit)
        if let min = line.min, let max = line.max {
            bytes += Array(",\"min\":\(Self.number(min)),\"max\":\(Self.number(max))".utf8)
        }
        bytes += Array(",\"samples\":\(line.samples)}\n".utf8)
    }

    private mutating func appendTime(_ t: HealthTimestamp?) {
        guard let t else { bytes += Self.literal("null"); return }
        bytes.append(0x22)
        t.appendISO8601(to: &bytes)
        bytes.append(0x22)
    }

    private mutating func appendJSON(_ text: String) {
        if let cached = jsonCache[text] { bytes += cached; return }
        let encoded = Array(JSONText.literal(text).utf8)
        if jsonCache.count < 10_000 { jsonCache[text] = encoded }
        bytes += encoded
    }

    private static func literal(_ text: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    // MARK: CSV

    private mutating func appendCSV(_ line: RecordLine) {
        let valueText: String
        switch line.value {
        case .text(let text): valueText = text
        case .decimal(let d): valueText = Self.decimalText(d)
        case .none: valueText = ""
        }
        let columns = [line.category, line.type, line.start?.iso8601 ?? "", line.end?.iso8601 ?? "", valueText, line.unit ?? "",
                       line.clipped ? "true" : ""]
        bytes += Array((columns.map(Self.csvField).joined(separator: ",") + "\n").utf8)
    }

    private mutating func appendCSV(_ line: AggregateLine) {
        let columns = [line.category, line.metric, line.period, line.value.map(Self.number) ?? "null", line.unit,
                       line.min.map(Self.number) ?? "", line.max.map(Self.number) ?? "", String(line.samples)]
        bytes += Array((columns.map(Self.csvField).joined(separator: ",") + "\n").utf8)
    }

    // MARK: Numbers and fields

    /// The exact decimal as the export wrote it (`12.50` stays `12.50`), else the double.
    public static func appendDecimal(_ d: DecimalValue, to out: inout [UInt8]) {
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

    /// `appendDecimal`'s text.
    public static func decimalText(_ d: DecimalValue) -> String {
        var out: [UInt8] = []
        appendDecimal(d, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Numbers as JSON: shortest round-trip form, integers without a fraction; `null` for a
    /// number that is not finite.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// An RFC 4180 field. A text that a spreadsheet would run as a formula (starting with `=`, `+`,
    /// `-`, `@`, a tab or a carriage return, and not a plain number) gets a leading `'`, as OWASP
    /// advises for CSV injection: a source or category value named `=HYPERLINK(...)` stays text.
    public static func csvField(_ text: String) -> String {
        var text = text
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Double(text) == nil {
            text = "'" + text
        }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
