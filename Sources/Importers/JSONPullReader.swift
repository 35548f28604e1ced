import BinaryCoding

/// A strict pull reader of one JSON document (RFC 8259) in memory: the caller asks for the value
/// it expects next (an object's keys, an array's elements, a string, a number) and skips the rest,
/// so a companion post becomes its entries without a tree of values or Codable's containers.
///
/// Hand-written because measurement says so: under `wrk`, Foundation's `JSONDecoder` took a sixth
/// of `serve`'s CPU (a post costs ~600 µs of it). Decoding a post of 24 entries, release builds on
/// the development machine: `JSONDecoder` 91–110 µs, `JSONSerialization` 62–66 µs, this reader
/// 15–16 µs (docs/benchmarks.md, "serve"). It refuses what is not JSON: control characters
/// and invalid UTF-8 in strings, bad escapes and lone surrogates, numbers outside the grammar,
/// trailing bytes, nesting deeper than `maxDepth`. A caller that meets a refusal hands the
/// document to `JSONDecoder`, whose errors users see.
struct JSONPullReader {
    /// What a value is, from its first byte.
    enum Kind { case object, array, string, number, `true`, `false`, null }

    struct Malformed: Error {}

    /// `JSONDecoder`'s own limit.
    static let maxDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0
    /// Whether the container just opened has not had a member yet.
    private var justOpened = false

    /// A reader of `bytes`, which must outlive it.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The kind of the value that starts at the next significant byte.
    mutating func peek() throws(Malformed) -> Kind {
        skipSpace()
        guard index < bytes.count else { throw Malformed() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"): return .true
        case UInt8(ascii: "f"): return .false
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw Malformed()
        }
    }

    /// Consumes `{`. Then `nextKey` until it returns nil.
    mutating func beginObject() throws(Malformed) {
        try open(UInt8(ascii: "{"))
    }

    /// The next key of the object being read (its value follows, to be read or skipped), or nil
    /// at its end, which is consumed.
    mutating func nextKey() throws(Malformed) -> String? {
        guard try nextMember(closing: UInt8(ascii: "}")) else { return nil }
        guard try peek() == .string else { throw Malformed() }
        let key = try readString()
        skipSpace()
        try expect(UInt8(ascii: ":"))
        return key
    }

    /// Consumes `[`. Then `nextElement` until it returns false.
    mutating func beginArray() throws(Malformed) {
        try open(UInt8(ascii: "["))
    }

    /// Whether another element of the array being read follows (to be read or skipped); at its
    /// end, false, and the `]` is consumed.
    mutating func nextElement() throws(Malformed) -> Bool {
        try nextMember(closing: UInt8(ascii: "]"))
    }

    /// A string value, its escapes decoded.
    mutating func readString() throws(Malformed) -> String {
        skipSpace()
        try expect(UInt8(ascii: "\""))
        let start = index
        // The common case: no escape, one pass to the closing quote, then one UTF-8 check.
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                defer { index += 1 }
                guard let text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) else { throw Malformed() }
                return text
            }
            if b == UInt8(ascii: "\\") { return try readEscapedString(from: start) }
            guard b >= 0x20 else { throw Malformed() }
            index += 1
        }
        throw Malformed()
    }

    /// A number value; nil when a `Double` cannot hold it, overflowing (`1e400`) or underflowing
    /// to zero (`1e-400`), as `JSONDecoder` refuses both.
    mutating func readNumber() throws(Malformed) -> Double? {
        skipSpace()
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw Malformed() }
        let mantissaStart = index
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { throw Malformed() }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw Malformed() }
        }
        let mantissaEnd = index
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw Malformed() }
        }
        guard let value = Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)),
              value.isFinite else { return nil }
        if value == 0, bytes[mantissaStart..<mantissaEnd].contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) { return nil }
        return value
    }

    /// Consumes `true`, `false` or `null`.
    mutating func readLiteral() throws(Malformed) {
        let word: StaticString = switch try peek() {
        case .true: "true"
        case .false: "false"
        case .null: "null"
        default: throw Malformed()
        }
        guard matches(word) else { throw Malformed() }
        index += word.utf8CodeUnitCount
    }

    /// Consumes the next value whatever it is, checking it as strictly as a read would.
    mutating func skipValue() throws(Malformed) {
        switch try peek() {
        case .object:
            try beginObject()
            while try nextKey() != nil { try skipValue() }
        case .array:
            try beginArray()
            while try nextElement() { try skipValue() }
        case .string: _ = try readString()
        case .number: _ = try readNumber()
        case .true, .false, .null: try readLiteral()
        }
    }

    /// Checks that nothing but whitespace follows the document.
    mutating func end() throws(Malformed) {
        skipSpace()
        guard index == bytes.count else { throw Malformed() }
    }

    // MARK: Internals

    private mutating func open(_ bracket: UInt8) throws(Malformed) {
        skipSpace()
        try expect(bracket)
        depth += 1
        guard depth <= Self.maxDepth else { throw Malformed() }
        skipSpace()
        // An empty container ends at once: `nextMember` must not ask for a comma first.
        justOpened = true
    }

    private mutating func nextMember(closing: UInt8) throws(Malformed) -> Bool {
        skipSpace()
        guard index < bytes.count else { throw Malformed() }
        if bytes[index] == closing {
            index += 1
            depth -= 1
            justOpened = false
            return false
        }
        if justOpened {
            justOpened = false
        } else {
            try expect(UInt8(ascii: ","))
        }
        return true
    }

    private mutating func expect(_ byte: UInt8) throws(Malformed) {
        guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
        index += 1
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Consumes a run of ASCII digits; returns how many.
    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    private func matches(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for k in 0..<count where bytes[index + k] != word.utf8Start[k] { return false }
        return true
    }

    /// The rest of a string that holds an escape, from its first byte at `start`.
    private mutating func readEscapedString(from start: Int) throws(Malformed) -> String {
        var text = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let b = bytes[index]
            index += 1
            switch b {
            case UInt8(ascii: "\""):
                guard let decoded = String(validating: text, as: UTF8.self) else { throw Malformed() }
                return decoded
            case UInt8(ascii: "\\"):
                guard let scalar = JSONEscape.decode(bytes, &index) else { throw Malformed() }
                text.append(contentsOf: UTF8.encode(scalar)!)
            default:
                guard b >= 0x20 else { throw Malformed() }
                text.append(b)
            }
        }
        throw Malformed()
    }
}
