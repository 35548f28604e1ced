import ResearchBundle

/// One data line of a bundle as the study database stages it (docs/study-schema.md): a raw
/// sample or record, an undated record (`Me`), or an aggregate (a daily or hourly figure).
struct StudyRow {
    enum Kind: String {
        /// A dated raw line: `samples`.
        case sample = "s"
        /// An undated raw line (a `Me` characteristic): `records`.
        case undated = "u"
        /// A daily or hourly figure: `aggregates`.
        case aggregate = "a"
    }

    var kind: Kind
    var category: String
    /// `raw`, `daily` or `hourly`: the grant's granularity, as the manifest gives it.
    var granularity: String
    /// The type (raw lines) or metric (aggregates).
    var name: String
    /// The local day the line belongs to (its start's, or its period's), `YYYY-MM-DD`.
    var day: String?
    /// Aggregates: `2024-01-05` or `2024-01-05T08`.
    var period: String?
    var start: String?
    var end: String?
    /// The start's UTC offset in minutes: the local clock the person lived by.
    var utcOffsetMinutes: Int?
    var value: Double?
    /// `value` as the line wrote it (COPY sends it as is; the hash reads it).
    var valueLiteral: String?
    /// A category value (`HKCategoryValueSleepAnalysisAsleepCore`) or characteristic, as text.
    var valueText: String?
    var unit: String?
    var minimum: Double?
    var maximum: Double?
    var minimumLiteral: String?
    var maximumLiteral: String?
    var samples: Int?
    var clipped = false
    /// The line's other members (a route point's coordinates, a record's attributes) as a JSON object.
    var fields: String?
    /// FNV-1a 64 of the line's content (hex): with its order among identical lines, a raw row's identity.
    var lineHash = ""
    /// The line's place in its bundle: identical lines are told apart by it.
    var ordinal = 0

    struct Malformed: Error {
        var reason: String
    }

    /// The members every raw line or aggregate has; the rest go to `fields`.
    private static let rawMembers: Set<String> = ["category", "type", "start", "end", "value", "unit", "clipped"]

    /// The row of one line of `file`.
    init(line: ArraySlice<UInt8>, file: BundleFileInfo, ordinal: Int) throws {
        let json: FlatJSONLine
        do { json = try FlatJSONLine(line) } catch { throw Malformed(reason: "not a JSON object") }
        self.ordinal = ordinal
        granularity = file.granularity
        guard case .string(let category)? = json["category"], category == file.category else {
            throw Malformed(reason: "its category is not the file's")
        }
        self.category = category
        if file.granularity == "raw" {
            guard case .string(let type)? = json["type"] else { throw Malformed(reason: "no type") }
            name = type
            switch json["start"] {
            case .string(let start)?:
                guard case .string(let end)? = json["end"], let day = Self.day(of: start) else { throw Malformed(reason: "a malformed time") }
                kind = .sample
                self.start = start
                self.end = end
                self.day = day
                utcOffsetMinutes = Self.offsetMinutes(of: start)
            case .null?:
                kind = .undated
            default:
                throw Malformed(reason: "no start")
            }
            switch json["value"] {
            case .number(let number, let text)?:
                value = number
                valueLiteral = text
            case .string(let text)?: valueText = text
            case .null?, nil: break
            default: throw Malformed(reason: "a malformed value")
            }
            if case .string(let unit)? = json["unit"] { self.unit = unit }
            if case .bool(true)? = json["clipped"] { clipped = true }
            let others = json.members.filter { !Self.rawMembers.contains($0.key) }
            if !others.isEmpty { fields = Self.object(others) }
        } else {
            guard case .string(let metric)? = json["metric"], case .string(let period)? = json["period"],
                  let day = Self.day(of: period), case .string(let unit)? = json["unit"] else {
                throw Malformed(reason: "not an aggregate line")
            }
            kind = .aggregate
            name = metric
            self.period = period
            self.day = day
            self.unit = unit
            if case .number(let v, let text)? = json["value"] { value = v; valueLiteral = text }
            if case .number(let v, let text)? = json["min"] { minimum = v; minimumLiteral = text }
            if case .number(let v, let text)? = json["max"] { maximum = v; maximumLiteral = text }
            if case .number(let v, _)? = json["samples"] { samples = Int(exactly: v) }
        }
        lineHash = Self.hash(of: self)
    }

    /// `YYYY-MM-DD` from the first ten characters of an ISO 8601 time or a period.
    static func day(of text: String) -> String? {
        let utf8 = Array(text.utf8.prefix(10))
        guard utf8.count == 10, utf8[4] == 0x2D, utf8[7] == 0x2D,
              utf8.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (0x30...0x39).contains($0.element) }) else { return nil }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// The offset of `2024-01-05T08:00:00+01:00` (or `Z`) in minutes.
    static func offsetMinutes(of time: String) -> Int? {
        if time.hasSuffix("Z") { return 0 }
        let utf8 = Array(time.utf8)
        guard utf8.count >= 6 else { return nil }
        let tail = utf8.suffix(6)
        let sign = tail.first!
        guard sign == 0x2B || sign == 0x2D, let h = Int(String(decoding: tail.dropFirst().prefix(2), as: UTF8.self)),
              let m = Int(String(decoding: tail.suffix(2), as: UTF8.self)) else { return nil }
        return (sign == 0x2D ? -1 : 1) * (h * 60 + m)
    }

    /// Members as a JSON object, nested values as they were written.
    static func object(_ members: [(key: String, value: FlatJSONLine.Value)]) -> String {
        var out = "{"
        for (i, member) in members.enumerated() {
            if i > 0 { out += "," }
            out += JSONText.literal(member.key) + ":"
            switch member.value {
            case .string(let s): out += JSONText.literal(s)
            case .number(_, let text): out += text
            case .bool(let b): out += b ? "true" : "false"
            case .null: out += "null"
            case .json(let text): out += text
            }
        }
        return out + "}"
    }

    /// FNV-1a 64 over the row's content, fields separated by a zero byte.
    static func hash(of row: StudyRow) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ text: String?) {
            for byte in (text ?? "\u{1}").utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            h = (h ^ 0) &* 0x100_0000_01b3
        }
        mix(row.kind.rawValue)
        mix(row.category)
        mix(row.granularity)
        mix(row.name)
        mix(row.start)
        mix(row.end)
        mix(row.period)
        mix(row.valueLiteral)
        mix(row.valueText)
        mix(row.unit)
        mix(row.clipped ? "c" : nil)
        mix(row.fields)
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
