import Foundation
import HealthModel
import VaultEvents

/// Reads a plain CSV of samples, streamed row by row:
///
///     type,start,end,value,unit,source
///     steps,2025-08-06 08:00,2025-08-06 09:00,38,count,Pedometer
///
/// `type` is a short metric name (`steps`) or a HealthKit identifier; `start`/`end` are Apple's
/// format, ISO 8601 with an offset, or local time; `value` is a number (with `unit`) or a category
/// value. `unit` and `source` may be missing. Fields may be quoted (RFC 4180). A row that cannot
/// be read is rejected alone, with its line.
///
/// Daily totals too, a date column and a column per metric, as apps write them (Health Auto
/// Export's CSV, spreadsheets): `Date,Step Count (count),Active Energy (kcal)`. Each number is
/// the metric's total of that local day (from midnight to midnight in `timeZone`); a unit in
/// parentheses is read as the column's unit.
struct CSVImporter {
    let sink: ImportSink
    let timeZone: TimeZone
    let progress: (Int64, Int64) -> Void

    static let required = ["type", "start", "end", "value"]

    func importCSV(_ input: ImportInput) throws {
        let path = input.name
        let total = input.size ?? 0
        var reader = CSVRowReader()
        var columns: [String: Int]?
        var daily: DailyColumns?
        var done: Int64 = 0
        var tally: [String: (count: Int, firstLine: Int)] = [:]
        func reject(_ reason: String, _ line: Int) {
            tally[reason] = tally[reason].map { ($0.count + 1, $0.firstLine) } ?? (1, line)
            sink.reject(1)
        }
        func row(_ fields: [String], line: Int) throws {
            guard let map = columns else {
                var names = fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                if let first = names.first, first.hasPrefix("\u{FEFF}") { names[0] = String(first.dropFirst()) }
                let missing = Self.required.filter { !names.contains($0) }
                if !missing.isEmpty, daily == nil, let layout = DailyColumns(header: fields) {
                    daily = layout
                    columns = [:]
                    return
                }
                guard missing.isEmpty else {
                    throw ImportError.notWellFormed(path: path, location: SourceLocation(line: line, column: 1),
                                                    message: "CSV header must name type,start,end,value (missing \(missing.joined(separator: ","))), "
                                                        + "or be daily totals: a date column and a column per metric (Date,Step Count)")
                }
                columns = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
                return
            }
            if fields.count == 1 && fields[0].isEmpty { return }
            if let daily {
                try dailyRow(fields, layout: daily, line: line, reject: reject)
                return
            }
            func field(_ name: String) -> String? {
                map[name].flatMap { $0 < fields.count ? fields[$0].trimmingCharacters(in: .whitespaces) : nil }.flatMap { $0.isEmpty ? nil : $0 }
            }
            guard let typeName = field("type"), let startText = field("start"), let endText = field("end"), let valueText = field("value") else {
                reject("missing field", line)
                return
            }
            guard let start = LocalTime.parseAny(Substring(startText), timeZone: timeZone),
                  let end = LocalTime.parseAny(Substring(endText), timeZone: timeZone) else {
                reject("unparseable date", line)
                return
            }
            guard AppleHealthHandler.plausible(start), AppleHealthHandler.plausible(end) else { reject("date out of range", line); return }
            guard end.seconds >= start.seconds else { reject("ends before it starts", line); return }
            let type: String, impliedUnit: String?
            switch TypeNames.resolve(typeName) {
            case .known(let identifier, let unit): (type, impliedUnit) = (identifier, unit)
            case .other(let name): (type, impliedUnit) = (name, nil)
            case .refused(let category, let closest):
                reject("a type name this build does not know that reads as \(category.rawValue) data (the closest known is \(closest); use a short name or HealthKit identifier)", line)
                return
            }
            let value: SampleValue
            if let number = Array(valueText.utf8).withUnsafeBytes({ DecimalValue.parse($0) }) {
                let cumulative = type.hasPrefix("HKQuantityTypeIdentifier") && AggregationStyle.of(type: type) == .cumulative
                if let refusal = AppleHealthHandler.refusal(of: number.double, cumulative: cumulative) {
                    reject(refusal.rawValue, line)
                    return
                }
                value = Self.quantity(number, unit: field("unit") ?? impliedUnit ?? "")
            } else if type.hasPrefix("HKQuantityTypeIdentifier") {
                reject("unparseable value", line)
                return
            } else {
                value = .category(valueText)
            }
            let source = HealthSource(name: field("source") ?? "CSV import")
            try sink.emit(.sample(HealthSample(type: type, source: source, start: start, end: end, value: value)))
        }
        do {
            try input.read { data in
                try reader.feed(data, row: row)
                done += Int64(data.count)
                progress(done, total)
            }
            try reader.finish(row: row)
        } catch let error as CSVRowReader.Malformed {
            throw ImportError.notWellFormed(path: path, location: SourceLocation(line: error.line, column: 1), message: error.reason)
        }
        guard columns != nil else {
            throw ImportError.notWellFormed(path: path, location: SourceLocation(line: 1, column: 1), message: "empty CSV: no header line")
        }
        for (reason, t) in tally.sorted(by: { $0.key < $1.key }) {
            sink.warn("\(t.count) row(s) rejected: \(reason) (first at line \(t.firstLine))")
        }
    }
}

extension CSVImporter {
    /// A daily-totals header: the date column and, per metric column, its type and unit.
    struct DailyColumns {
        var date: Int
        var metrics: [(column: Int, type: String, unit: String)]

        /// Nil unless the first column names a date and at least one other a known quantity type.
        init?(header: [String]) {
            let names = header.map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = names.first?.replacingOccurrences(of: "\u{FEFF}", with: "").lowercased(),
                  ["date", "day", "date/time", "datetime", "start"].contains(first) else { return nil }
            date = 0
            metrics = []
            for (i, name) in names.enumerated().dropFirst() {
                // `Step Count (count)`: the name, and the unit in parentheses.
                var base = name, unit: String?
                if let open = name.lastIndex(of: "("), name.hasSuffix(")") {
                    base = String(name[..<open]).trimmingCharacters(in: .whitespaces)
                    unit = String(name[name.index(after: open)..<name.index(before: name.endIndex)])
                }
                guard case .known(let identifier, let implied) = TypeNames.resolve(base), identifier.hasPrefix("HKQuantityTypeIdentifier") else { continue }
                metrics.append((i, identifier, unit ?? implied ?? ""))
            }
            guard !metrics.isEmpty else { return nil }
        }
    }

    /// A number in `unit`, in the canonical unit when it has one.
    static func quantity(_ number: DecimalValue, unit: String) -> SampleValue {
        guard let canonical = UnitNormalizer.canonical(for: unit) else { return .quantity(number, unit: unit) }
        return .quantity(number.scaled(by: canonical.factor), unit: canonical.unit)
    }

    /// One day's totals: a sample per metric with a number, spanning the local day.
    func dailyRow(_ fields: [String], layout: DailyColumns, line: Int, reject: (String, Int) -> Void) throws {
        let text = layout.date < fields.count ? fields[layout.date].trimmingCharacters(in: .whitespaces) : ""
        guard let parsed = LocalTime.parseAny(Substring(text.count > 10 ? String(text.prefix(10)) + " 12:00" : text + " 12:00"), timeZone: timeZone)
                ?? LocalTime.parseAny(Substring(text), timeZone: timeZone) else {
            reject("unparseable date", line)
            return
        }
        let day = LocalDay(instant: parsed.seconds, utcOffset: parsed.utcOffset)
        guard let start = LocalTime.parseAny(Substring(day.description + " 00:00"), timeZone: timeZone),
              let end = LocalTime.parseAny(Substring(LocalDay(dayNumber: day.dayNumber + 1).description + " 00:00"), timeZone: timeZone) else {
            reject("unparseable date", line)
            return
        }
        for metric in layout.metrics where metric.column < fields.count {
            let cell = fields[metric.column].trimmingCharacters(in: .whitespaces)
            guard !cell.isEmpty else { continue }
            guard let number = Array(cell.utf8).withUnsafeBytes({ DecimalValue.parse($0) }) else { reject("unparseable value", line); continue }
            if let refusal = AppleHealthHandler.refusal(of: number.double, cumulative: AggregationStyle.of(type: metric.type) == .cumulative) {
                reject(refusal.rawValue, line)
                continue
            }
            try sink.emit(.sample(HealthSample(type: metric.type, source: HealthSource(name: "CSV import"), start: start, end: end,
                                               value: Self.quantity(number, unit: metric.unit),
                                               metadata: [MetadataEntry(key: "HealthVaultDailyTotal", value: "1")])))
        }
    }
}

/// Splits CSV bytes into rows of fields across chunk boundaries (RFC 4180: quoted fields may hold
/// commas, doubled quotes and newlines). Rows are numbered by the line they start on.
struct CSVRowReader {
    private var field: [UInt8] = []
    private var fields: [String] = []
    private var inQuotes = false
    private var quoteJustClosed = false
    private var line = 1
    private var rowLine = 1
    static let maxField = 1 << 20
    static let maxFields = 1_000

    /// A row that cannot be split: where it starts and why.
    struct Malformed: Error {
        var line: Int
        var reason: String
    }

    mutating func feed(_ data: Data, row: ([String], Int) throws -> Void) throws {
        for byte in data {
            if inQuotes {
                if byte == 0x22 { inQuotes = false; quoteJustClosed = true } else {
                    if byte == 0x0A { line += 1 }
                    field.append(byte)
                    if field.count > Self.maxField { throw Malformed(line: rowLine, reason: "a field longer than 1 MiB (an unclosed quote?)") }
                }
                continue
            }
            switch byte {
            case 0x22:
                if quoteJustClosed { field.append(0x22) }
                inQuotes = true
                quoteJustClosed = false
            case 0x2C:
                try endField()
            case 0x0A:
                try endField()
                if field.isEmpty && fields.last?.hasSuffix("\r") == true { fields[fields.count - 1].removeLast() }
                try row(fields, rowLine)
                fields.removeAll(keepingCapacity: true)
                line += 1
                rowLine = line
            default:
                quoteJustClosed = false
                field.append(byte)
            }
            if field.count > Self.maxField { throw Malformed(line: rowLine, reason: "a field longer than 1 MiB") }
        }
    }

    private mutating func endField() throws {
        guard fields.count < Self.maxFields else {
            throw Malformed(line: rowLine, reason: "more than \(Self.maxFields) fields in a row")
        }
        fields.append(String(decoding: field, as: UTF8.self))
        field.removeAll(keepingCapacity: true)
        quoteJustClosed = false
    }

    mutating func finish(row: ([String], Int) throws -> Void) throws {
        if !field.isEmpty || !fields.isEmpty {
            try endField()
            try row(fields, rowLine)
        }
    }
}
