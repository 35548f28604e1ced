import Foundation
import Projections

/// The NDJSON and CSV lines of bundle data files (shapes in ../shared/spec/vaultctl.md).
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
            csv += Array((aggregated ? "category,metric,period,value,unit,min,max,samples\n" : "category,type,start,end,value,unit\n").utf8)
        }
    }

    /// A raw line: one sample or record as recorded.
    mutating func raw(category: String, type: String, start: HealthTimestamp, end: HealthTimestamp, value: RawValue, unit: String?) {
        let startText = Self.isoDate(start), endText = Self.isoDate(end)
        var line = "{\"category\":\(Self.json(category)),\"type\":\(Self.json(type)),\"start\":\"\(startText)\",\"end\":\"\(endText)\",\"value\":"
        switch value {
        case .number(let text): line += text
        case .text(let text): line += Self.json(text)
        case .none: line += "null"
        }
        line += ",\"unit\":\(unit.map(Self.json) ?? "null")}\n"
        ndjson += Array(line.utf8)
        if withCSV {
            let valueText: String
            switch value {
            case .number(let text), .text(let text): valueText = text
            case .none: valueText = ""
            }
            csv += Array(([category, type, startText, endText, valueText, unit ?? ""].map(Self.csvField).joined(separator: ",") + "\n").utf8)
        }
        count += 1
    }

    enum RawValue {
        case number(String)
        case text(String)
        case none
    }

    /// An aggregated line: a metric's figure for a period.
    mutating func aggregate(category: String, metric: String, period: String, value: Double, unit: String, min: Double?, max: Double?, samples: Int) {
        let value = Self.micro(value), min = min.map(Self.micro), max = max.map(Self.micro)
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
        let local = t.seconds + Int64(t.utcOffset)
        let day = LocalDay(dayNumber: LocalDay.floorDivide(local, 86_400))
        let second = local - day.dayNumber * 86_400
        let offset = Int(t.utcOffset)
        let sign = offset < 0 ? "-" : "+"
        return "\(day)T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60))\(sign)\(two(Int64(abs(offset) / 3600))):\(two(Int64(abs(offset) / 60 % 60)))"
    }

    private static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }

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

    /// An RFC 4180 field.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
