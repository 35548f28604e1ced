import Foundation
import HealthModel
import VaultEvents

/// Reads an ECG recording as Apple's export writes it (`electrocardiograms/ecg_2024-05-01.csv`):
///
///     Name,Jane Appleseed
///     Date of Birth,"1 Jan 1980"
///     Recorded Date,2024-05-01 08:12:03 +0200
///     Classification,Sinus Rhythm
///     Symptoms,
///     Software Version,2
///     Device,"Watch6,2"
///     Sample Rate,512 hertz
///     Lead,Lead I
///     Unit,µV
///
///     -93.456
///     -94.105
///
/// The header's names follow the phone's language, so fields are found by position and form:
/// the recorded date is the first value that reads as a date, and what comes before it (the
/// person's name and birth date) is left out; the sample rate is the value in hertz; the unit
/// the last field; the voltages start at the first line after the date that is a number (Apple
/// leaves blank lines inside the header, and a bare `Name` when it has none). Voltages are kept exactly to the thousandth (Apple writes three decimals).
enum ECGReader {
    /// Most samples one recording may hold (30 s at 512 Hz is 15,360).
    static let maximumSamples = 1_000_000

    enum Failure: Error, Equatable {
        /// What is wrong, and the 1-based line.
        case malformed(String, line: Int)
    }

    /// Whether the first bytes read as an ECG header: a field in hertz and one that is a date.
    static func looksLikeECG(_ head: [UInt8]) -> Bool {
        let lines = String(decoding: head, as: UTF8.self).split(whereSeparator: \.isNewline)
        let values = lines.compactMap { line in line.firstIndex(of: ",").map { String(line[line.index(after: $0)...]).trimmingCharacters(in: .whitespaces) } }
        // A sample rate in hertz on a `key,value` line is the recording's mark: its date is read
        // (and an unreadable one refused with its line) by the reader, not asked for here.
        return values.contains { $0.lowercased().hasSuffix("hertz") || $0.lowercased().hasSuffix("hz") } && lines.count >= 3
    }

    /// A recording of a million samples is about 9 MB; a file past this is not one.
    static let maximumBytes = 16 << 20

    /// Reads a whole recording from `input` (a few hundred kilobytes) and hands it to `sink`; a
    /// recording that cannot be read (or is far too large to be one) is rejected alone, with a
    /// warning naming the file and line: the rest of the import goes on.
    static func importECG(_ input: ImportInput, into sink: ImportSink) throws {
        var data = Data()
        do {
            try input.read { chunk in
                data.append(chunk)
                guard data.count <= maximumBytes else { throw Failure.malformed("larger than \(maximumBytes >> 20) MiB", line: 1) }
            }
            try sink.emit(.electrocardiogram(try parse(data)))
        } catch Failure.malformed(let what, let line) {
            sink.reject(1)
            sink.warn("ECG recording \(input.name) rejected: \(what) (line \(line))")
        }
    }

    static func parse(_ data: Data) throws -> Electrocardiogram {
        var text = String(decoding: data, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        // Lines one at a time (never all of them in memory), LF or CRLF, trimmed.
        var rest = Substring(text)
        var lineNumber = 0
        func nextLine() -> String? {
            guard !rest.isEmpty else { return nil }
            lineNumber += 1
            let end = rest.utf8.firstIndex(of: 0x0A) ?? rest.endIndex
            let line = rest[..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.utf8.index(after: end)...]
            return line.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var fields: [MetadataEntry] = []
        var recorded: HealthTimestamp?
        var values: [Int64] = []
        // The header: name,value lines (a bare name has an empty value) up to the first voltage.
        // Apple leaves blank lines inside it (before `Lead` and `Unit`).
        while let line = nextLine() {
            if line.isEmpty { continue }
            if recorded != nil, let v = thousandths(line) {
                values.append(v)
                break
            }
            let key: String
            var value: String
            if let comma = line.firstIndex(of: ",") {
                key = String(line[..<comma]).trimmingCharacters(in: .whitespaces)
                value = String(line[line.index(after: comma)...]).trimmingCharacters(in: .whitespaces)
            } else {
                (key, value) = (line, "")
            }
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"") }
            if recorded == nil, let date = Array(value.utf8).withUnsafeBytes({ HealthTimestamp.parseExportDate($0) }) {
                recorded = date
                fields = []  // the name and birth date before it are not kept
            }
            fields.append(MetadataEntry(key: key, value: value))
        }
        guard let recorded else { throw Failure.malformed("no recorded date in the header", line: 1) }
        let rate = fields.lazy.compactMap { Self.hertz($0.value) }.first
        let unit = fields.last?.value ?? ""
        while let line = nextLine() {
            if line.isEmpty { continue }
            guard values.count < maximumSamples else { throw Failure.malformed("more than \(maximumSamples) samples", line: lineNumber) }
            guard let v = Self.thousandths(line) else { throw Failure.malformed("not a voltage", line: lineNumber) }
            values.append(v)
        }
        guard !values.isEmpty else { throw Failure.malformed("no voltages after the header", line: lineNumber) }
        return Electrocardiogram(recorded: recorded, fields: fields, millivoltages: values, unit: unit, sampleRate: rate)
    }

    /// `512 hertz`, `512 Hz`, `512,000 Hz`: the number.
    static func hertz(_ value: String) -> Double? {
        let lower = value.lowercased()
        guard lower.hasSuffix("hertz") || lower.hasSuffix("hz") else { return nil }
        let number = lower.prefix { $0.isNumber || $0 == "." || $0 == "," }.replacingOccurrences(of: ",", with: ".")
        // Apple records at 512 Hz; anything outside 1 Hz to 100 kHz is no ECG's rate.
        return Double(number).flatMap { (1...100_000).contains($0) ? $0 : nil }
    }

    /// A voltage in thousandths, exactly: `-93.456` → -93456; a decimal comma is read as a point.
    static func thousandths(_ text: String) -> Int64? {
        var t = text
        if t.hasPrefix("\""), t.hasSuffix("\""), t.count >= 2 { t = String(t.dropFirst().dropLast()) }
        if !t.contains("."), t.filter({ $0 == "," }).count == 1 { t = t.replacingOccurrences(of: ",", with: ".") }
        guard let d = Array(t.utf8).withUnsafeBytes({ DecimalValue.parse($0) }), d.exact, d.scale <= 3,
              abs(d.mantissa) < 1 << 50 else { return nil }
        var m = d.mantissa
        for _ in 0..<(3 - Int(d.scale)) { m *= 10 }
        return m
    }
}
