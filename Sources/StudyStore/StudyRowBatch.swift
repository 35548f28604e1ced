import ResearchBundle

/// Bundle lines as the study database stages them (docs/study-schema.md), a batch at a time: a
/// raw sample or record, an undated record (`Me`), or an aggregate (a daily or hourly figure).
/// Every row's fields are byte ranges of one arena, so a batch of thousands of lines costs a
/// few reused allocations rather than a String per field.
struct StudyRowBatch {
    enum Kind: UInt8 {
        /// A dated raw line: `samples`.
        case sample = 0x73 // s
        /// An undated raw line (a `Me` characteristic): `records`.
        case undated = 0x75 // u
        /// A daily or hourly figure: `aggregates`.
        case aggregate = 0x61 // a
    }

    /// A row's fields, in the staging table's column order (`StudySchema.stagingColumns`).
    enum Field: Int, CaseIterable {
        case kind, category, granularity, name, day, period, start, end, utcOffset
        case value, valueText, unit, minimum, maximum, samples, clipped, fields, lineHash, ordinal
    }

    struct Malformed: Error {
        var reason: String
    }

    private(set) var count = 0
    private(set) var arena: [UInt8] = []
    /// Per row, per field: start and end in `arena`; a start of -1 is SQL's null.
    private var spans: [Int32] = []
    private(set) var kinds: [Kind] = []
    /// FNV-1a 64 of each row's content: with its order among identical lines, a raw row's identity.
    private(set) var hashes: [UInt64] = []
    /// Per row: whether a field may hold a backslash, tab, newline or carriage return.
    private(set) var needsEscaping: [Bool] = []
    /// Per row: `value`, `min` and `max` as doubles (NaN for none), for databases that bind them.
    private(set) var numbers: [Double] = []
    /// Per row: the year and month of its day (`year * 12 + month - 1`), -1 when undated.
    private(set) var months: [Int32] = []

    static let fieldCount = Field.allCases.count

    mutating func removeAll() {
        count = 0
        arena.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        kinds.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        needsEscaping.removeAll(keepingCapacity: true)
        numbers.removeAll(keepingCapacity: true)
        months.removeAll(keepingCapacity: true)
    }

    /// The bytes of `field` in row `row`, nil for null; valid inside `body`.
    func withField<R>(_ row: Int, _ field: Field, _ body: (UnsafeBufferPointer<UInt8>?) throws -> R) rethrows -> R {
        let i = (row * Self.fieldCount + field.rawValue) * 2
        let start = Int(spans[i])
        guard start >= 0 else { return try body(nil) }
        return try arena.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<Int(spans[i + 1])])) }
    }

    /// The start and end of `field` in row `row` within `arena`, nil for null.
    func span(_ row: Int, _ field: Field) -> Range<Int>? {
        let i = (row * Self.fieldCount + field.rawValue) * 2
        return spans[i] < 0 ? nil : Int(spans[i])..<Int(spans[i + 1])
    }

    /// The run of `arena` that holds row `row`'s fields: they are written one after the other,
    /// from its kind to its ordinal, neither of which is ever null.
    func rowExtent(_ row: Int) -> Range<Int> {
        let first = row * Self.fieldCount * 2
        return Int(spans[first])..<Int(spans[first + Self.fieldCount * 2 - 1])
    }

    /// Appends the row of one line of `file`, scanned by `scanner`; on error the batch is as it was.
    mutating func append(line: UnsafeBufferPointer<UInt8>, scanner: JSONLineScanner, file: FileFacts, ordinal: Int) throws(Malformed) {
        do { try scanner.scan(line) } catch { throw Malformed(reason: "not a JSON object") }
        typealias Member = JSONLineScanner.Member
        guard let category = scanner.member("category", in: line), category.kind == .string,
              scanner.bytes(category.value, in: line).elementsEqual(file.category) else {
            throw Malformed(reason: "its category is not the file's")
        }
        let kind: Kind
        var name: Member, start: Member?, end: Member?, period: Member?, unit: Member?
        var value: Member?, valueText: Member?, minimum: Member?, maximum: Member?, samples: Int?
        var month: Int32 = -1
        var clipped = false
        if file.isRaw {
            guard let type = scanner.member("type", in: line), type.kind == .string else { throw Malformed(reason: "no type") }
            name = type
            guard let first = scanner.member("start", in: line) else { throw Malformed(reason: "no start") }
            switch first.kind {
            case .string:
                guard let last = scanner.member("end", in: line), last.kind == .string,
                      let m = Self.month(of: scanner.bytes(first.value, in: line)) else {
                    throw Malformed(reason: "a malformed time")
                }
                kind = .sample
                month = m
                start = first
                end = last
            case .null:
                kind = .undated
            default:
                throw Malformed(reason: "no start")
            }
            if let member = scanner.member("value", in: line) {
                switch member.kind {
                case .number: value = member
                case .string: valueText = member
                case .null: break
                default: throw Malformed(reason: "a malformed value")
                }
            }
            if let member = scanner.member("unit", in: line), member.kind == .string { unit = member }
            clipped = scanner.member("clipped", in: line)?.kind == .true
        } else {
            guard let metric = scanner.member("metric", in: line), metric.kind == .string,
                  let when = scanner.member("period", in: line), when.kind == .string,
                  let m = Self.month(of: scanner.bytes(when.value, in: line)),
                  let measure = scanner.member("unit", in: line), measure.kind == .string else {
                throw Malformed(reason: "not an aggregate line")
            }
            kind = .aggregate
            month = m
            name = metric
            period = when
            unit = measure
            if let v = scanner.member("value", in: line), v.kind == .number { value = v }
            if let v = scanner.member("min", in: line), v.kind == .number { minimum = v }
            if let v = scanner.member("max", in: line), v.kind == .number { maximum = v }
            if let v = scanner.member("samples", in: line), v.kind == .number { samples = Int(exactly: v.number) }
        }

        let base = spans.count
        spans.append(contentsOf: repeatElement(-1, count: Self.fieldCount * 2))
        func text(_ field: Field, _ member: Member?) {
            guard let member else { return }
            put(field, scanner.bytes(member.value, in: line), base: base)
        }
        func written(_ field: Field, _ member: Member?) {
            guard let member else { return }
            put(field, UnsafeBufferPointer(rebasing: line[member.written]), base: base)
        }
        put(.kind, CollectionOfOne(kind.rawValue), base: base)
        text(.category, category)
        put(.granularity, file.granularity, base: base)
        text(.name, name)
        if let dated = kind == .aggregate ? period : start { put(.day, scanner.bytes(dated.value, in: line).prefix(10), base: base) }
        text(.period, period)
        text(.start, start)
        text(.end, end)
        if let start, let minutes = Self.offsetMinutes(of: scanner.bytes(start.value, in: line)) { decimal(.utcOffset, minutes, base: base) }
        written(.value, value)
        text(.valueText, valueText)
        text(.unit, unit)
        written(.minimum, minimum)
        written(.maximum, maximum)
        if let samples { decimal(.samples, samples, base: base) }
        put(.clipped, CollectionOfOne(clipped ? 0x74 : 0x66), base: base)
        if file.isRaw { fieldsObject(scanner: scanner, line: line, base: base) }
        // The identity: what the line says, in the order the first loader hashed it.
        var hash = FNV1a()
        mix(.kind, base: base, into: &hash)
        mix(.category, base: base, into: &hash)
        mix(.granularity, base: base, into: &hash)
        mix(.name, base: base, into: &hash)
        mix(.start, base: base, into: &hash)
        mix(.end, base: base, into: &hash)
        mix(.period, base: base, into: &hash)
        mix(.value, base: base, into: &hash)
        mix(.valueText, base: base, into: &hash)
        mix(.unit, base: base, into: &hash)
        if clipped { hash.mix("c") } else { hash.mixNull() }
        mix(.fields, base: base, into: &hash)
        hex(.lineHash, hash.value, base: base)
        decimal(.ordinal, ordinal, base: base)

        kinds.append(kind)
        hashes.append(hash.value)
        needsEscaping.append(scanner.hasSpecialBytes || file.needsEscaping)
        numbers.append(value?.number ?? .nan)
        numbers.append(minimum?.number ?? .nan)
        numbers.append(maximum?.number ?? .nan)
        months.append(month)
        count += 1
    }

    private mutating func mark(_ field: Field, from start: Int, base: Int) {
        spans[base + field.rawValue * 2] = Int32(start)
        spans[base + field.rawValue * 2 + 1] = Int32(arena.count)
    }

    private mutating func put<C: Collection>(_ field: Field, _ bytes: C, base: Int) where C.Element == UInt8 {
        let start = arena.count
        arena.append(contentsOf: bytes)
        mark(field, from: start, base: base)
    }

    private mutating func decimal(_ field: Field, _ value: Int, base: Int) {
        let start = arena.count
        if value < 0 { arena.append(0x2D) }
        var magnitude = value.magnitude
        let digitsStart = arena.count
        repeat {
            arena.append(UInt8(magnitude % 10) + 0x30)
            magnitude /= 10
        } while magnitude > 0
        arena[digitsStart...].reverse()
        mark(field, from: start, base: base)
    }

    private mutating func hex(_ field: Field, _ value: UInt64, base: Int) {
        let start = arena.count
        for shift in stride(from: 60, through: 0, by: -4) {
            let nibble = UInt8((value >> UInt64(shift)) & 0xF)
            arena.append(nibble < 10 ? nibble + 0x30 : nibble - 10 + 0x61)
        }
        mark(field, from: start, base: base)
    }

    private func mix(_ field: Field, base: Int, into hash: inout FNV1a) {
        let start = Int(spans[base + field.rawValue * 2])
        guard start >= 0 else { return hash.mixNull() }
        let end = Int(spans[base + field.rawValue * 2 + 1])
        arena.withUnsafeBufferPointer { hash.mix(UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }

    private static let commonMembers: [[UInt8]] = ["category", "type", "start", "end", "value", "unit", "clipped"].map { Array($0.utf8) }

    /// The line's members other than the ones every raw line has, as a JSON object (left null
    /// when there are none): keys and strings written as `JSONText.literal` writes them, other
    /// values as the line wrote them.
    private mutating func fieldsObject(scanner: JSONLineScanner, line: UnsafeBufferPointer<UInt8>, base: Int) {
        let start = arena.count
        var any = false
        for member in scanner.members {
            let key = scanner.bytes(member.key, in: line)
            if Self.commonMembers.contains(where: { key.elementsEqual($0) }) { continue }
            arena.append(any ? 0x2C : 0x7B)
            any = true
            appendLiteral(member.key, scanner: scanner, line: line)
            arena.append(0x3A)
            if member.kind == .string {
                appendLiteral(member.value, scanner: scanner, line: line)
            } else {
                arena.append(contentsOf: UnsafeBufferPointer(rebasing: line[member.written]))
            }
        }
        guard any else { return }
        arena.append(0x7D)
        mark(.fields, from: start, base: base)
    }

    /// A JSON string of `span`'s decoded text, as `JSONText.literal` writes it.
    private mutating func appendLiteral(_ span: JSONLineScanner.Span, scanner: JSONLineScanner, line: UnsafeBufferPointer<UInt8>) {
        if !span.decoded {
            // Nothing needed escaping on the way in, so nothing does on the way out.
            arena.append(0x22)
            arena.append(contentsOf: UnsafeBufferPointer(rebasing: line[span.start..<span.end]))
            arena.append(0x22)
        } else {
            // Rare (the line had escapes): the decoded bytes are valid UTF-8, so the String is exact.
            arena.append(contentsOf: JSONText.literal(String(decoding: scanner.bytes(span, in: line), as: UTF8.self)).utf8)
        }
    }

    /// `year * 12 + month - 1` of a `YYYY-MM-DD…` time or period, nil unless its first ten
    /// bytes are a date's digits and dashes.
    static func month(of text: UnsafeBufferPointer<UInt8>) -> Int32? {
        guard text.count >= 10, text[4] == 0x2D, text[7] == 0x2D else { return nil }
        var year: Int32 = 0, month: Int32 = 0
        for i in 0..<10 where i != 4 && i != 7 {
            let c = text[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            if i < 4 {
                year = year * 10 + Int32(c - 0x30)
            } else if i < 7 {
                month = month * 10 + Int32(c - 0x30)
            }
        }
        return year * 12 + month - 1
    }

    /// The offset of `2024-01-05T08:00:00+01:00` (or `Z`) in minutes; nil without one.
    static func offsetMinutes(of time: UnsafeBufferPointer<UInt8>) -> Int? {
        if time.last == 0x5A { return 0 }
        guard time.count >= 6 else { return nil }
        let tail = UnsafeBufferPointer(rebasing: time[(time.count - 6)...])
        func two(_ i: Int) -> Int? {
            guard (0x30...0x39).contains(tail[i]), (0x30...0x39).contains(tail[i + 1]) else { return nil }
            return Int(tail[i] - 0x30) * 10 + Int(tail[i + 1] - 0x30)
        }
        // The separator is not looked at (nor was it by the first loader).
        guard tail[0] == 0x2B || tail[0] == 0x2D, let h = two(1), let m = two(4) else { return nil }
        return (tail[0] == 0x2D ? -1 : 1) * (h * 60 + m)
    }

    /// What a row needs to know of its file.
    struct FileFacts {
        var category: [UInt8]
        var granularity: [UInt8]
        var isRaw: Bool
        /// Whether the manifest's names for the file hold a byte COPY must escape.
        var needsEscaping: Bool

        init(category: String, granularity: String) {
            self.category = Array(category.utf8)
            self.granularity = Array(granularity.utf8)
            isRaw = granularity == "raw"
            needsEscaping = (self.category + self.granularity).contains { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        }

        init(_ file: BundleFileInfo) {
            self.init(category: file.category, granularity: file.granularity)
        }
    }
}

/// FNV-1a 64 over a row's fields, each followed by a zero byte; a null field is the byte 1.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func mix(_ bytes: UnsafeBufferPointer<UInt8>?) {
        guard let bytes else { return mixNull() }
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
        value = value &* 0x100_0000_01b3
    }

    mutating func mix(_ text: StaticString) {
        mix(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func mixNull() {
        mix("\u{1}")
    }
}
