/// One NDJSON line of a bundle's data file read as a flat JSON object: scalar members decoded,
/// nested objects and arrays (a record's `metadata`, `attributes`) kept as their exact JSON text.
/// Hand-written because `JSONSerialization` costs more than the database does at study scale
/// (docs/study-schema.md, "Loading"); strict: anything that is not one JSON object is refused.
struct FlatJSONLine {
    enum Value: Equatable {
        case string(String)
        /// A number, with its exact text.
        case number(Double, text: String)
        case bool(Bool)
        case null
        /// A nested object or array, as written.
        case json(String)
    }

    private(set) var members: [(key: String, value: Value)] = []

    /// The value of `key`, nil when absent.
    subscript(key: String) -> Value? {
        members.first { $0.key == key }?.value
    }

    struct Malformed: Error {}

    /// JSON's number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func isJSONNumber(_ bytes: ArraySlice<UInt8>) -> Bool {
        var p = bytes.startIndex
        let end = bytes.endIndex
        func digits() -> Int {
            let start = p
            while p < end, (0x30...0x39).contains(bytes[p]) { p += 1 }
            return p - start
        }
        if p < end, bytes[p] == 0x2D { p += 1 }
        guard p < end else { return false }
        if bytes[p] == 0x30 { p += 1 } else if digits() == 0 { return false }
        if p < end, bytes[p] == 0x2E {
            p += 1
            guard digits() > 0 else { return false }
        }
        if p < end, bytes[p] == 0x65 || bytes[p] == 0x45 {
            p += 1
            if p < end, bytes[p] == 0x2B || bytes[p] == 0x2D { p += 1 }
            guard digits() > 0 else { return false }
        }
        return p == end
    }

    init(_ line: ArraySlice<UInt8>) throws {
        var p = line.startIndex
        let end = line.endIndex
        func skipSpace() { while p < end, line[p] == 0x20 || line[p] == 0x09 || line[p] == 0x0D { p += 1 } }
        func expect(_ byte: UInt8) throws {
            skipSpace()
            guard p < end, line[p] == byte else { throw Malformed() }
            p += 1
        }
        func string() throws -> String {
            try expect(0x22)
            var bytes: [UInt8] = []
            var plainStart = p
            while true {
                guard p < end else { throw Malformed() }
                let b = line[p]
                if b == 0x22 {
                    bytes += line[plainStart..<p]
                    p += 1
                    break
                }
                if b < 0x20 { throw Malformed() }
                if b == 0x5C {
                    bytes += line[plainStart..<p]
                    p += 1
                    guard p < end else { throw Malformed() }
                    switch line[p] {
                    case 0x22: bytes.append(0x22)
                    case 0x5C: bytes.append(0x5C)
                    case 0x2F: bytes.append(0x2F)
                    case 0x62: bytes.append(0x08)
                    case 0x66: bytes.append(0x0C)
                    case 0x6E: bytes.append(0x0A)
                    case 0x72: bytes.append(0x0D)
                    case 0x74: bytes.append(0x09)
                    case 0x75:
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            // A surrogate pair: the low half must follow.
                            guard p + 2 < end, line[p + 1] == 0x5C, line[p + 2] == 0x75 else { throw Malformed() }
                            p += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw Malformed() }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        // NUL: no database column takes it (PostgreSQL refuses it, SQLite would cut the text).
                        guard scalar != 0, let unicode = Unicode.Scalar(scalar) else { throw Malformed() }
                        bytes += Array(String(Character(unicode)).utf8)
                    default: throw Malformed()
                    }
                    p += 1
                    plainStart = p
                    continue
                }
                p += 1
            }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw Malformed() }
            return text
        }
        /// Reads the four hex digits after `\u` (p on the `u`), leaving p on the last digit.
        func hex4() throws -> UInt32 {
            guard p + 4 < end else { throw Malformed() }
            var value: UInt32 = 0
            for i in 1...4 {
                let c = line[p + i]
                let digit: UInt32
                switch c {
                case 0x30...0x39: digit = UInt32(c - 0x30)
                case 0x41...0x46: digit = UInt32(c - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(c - 0x61 + 10)
                default: throw Malformed()
                }
                value = value << 4 | digit
            }
            p += 4
            return value
        }
        func literal(_ word: String) throws {
            let bytes = Array(word.utf8)
            guard end - p >= bytes.count, Array(line[p..<p + bytes.count]) == bytes else { throw Malformed() }
            p += bytes.count
        }
        /// A nested object or array, skipped with strings respected; its text kept.
        func nested() throws -> String {
            let start = p
            var depth = 0
            var inString = false
            while p < end {
                let b = line[p]
                if inString {
                    if b == 0x5C { p += 2; continue }
                    if b == 0x22 { inString = false }
                } else if b == 0x22 {
                    inString = true
                } else if b == 0x7B || b == 0x5B {
                    depth += 1
                } else if b == 0x7D || b == 0x5D {
                    depth -= 1
                    if depth == 0 {
                        p += 1
                        guard let text = String(validating: line[start..<p], as: UTF8.self) else { throw Malformed() }
                        return text
                    }
                }
                p += 1
            }
            throw Malformed()
        }
        func value() throws -> Value {
            skipSpace()
            guard p < end else { throw Malformed() }
            switch line[p] {
            case 0x22: return .string(try string())
            case 0x7B, 0x5B: return .json(try nested())
            case 0x74: try literal("true"); return .bool(true)
            case 0x66: try literal("false"); return .bool(false)
            case 0x6E: try literal("null"); return .null
            default:
                let start = p
                while p < end, let c = Optional(line[p]), (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2B || c == 0x2E || c == 0x65 || c == 0x45 { p += 1 }
                guard p > start, let text = String(validating: line[start..<p], as: UTF8.self), Self.isJSONNumber(line[start..<p]),
                      let number = Double(text), number.isFinite, number == 0 || abs(number) >= 1e-300 else {
                    throw Malformed()
                }
                return .number(number, text: text)
            }
        }

        try expect(0x7B)
        skipSpace()
        if p < end, line[p] == 0x7D {
            p += 1
        } else {
            while true {
                let key = try string()
                try expect(0x3A)
                members.append((key, try value()))
                skipSpace()
                guard p < end else { throw Malformed() }
                if line[p] == 0x2C { p += 1; continue }
                if line[p] == 0x7D { p += 1; break }
                throw Malformed()
            }
        }
        skipSpace()
        guard p == end else { throw Malformed() }
    }
}
