import BinaryCoding

/// Reads one NDJSON line of a bundle's data file as a flat JSON object, in place: each member's
/// key and value are ranges of the line (or of `decoded`, for a string with escapes), so a line
/// costs no allocation once the scanner is warm. Scalar members are checked and classified;
/// nested objects and arrays (a record's `metadata`) are kept as their exact text.
///
/// Hand-written because a general JSON parser costs more than the database does at study scale
/// (docs/study-schema.md, "Loading"). Strict: anything that is not one JSON object is refused,
/// as are numbers outside JSON's grammar or a double's normal range, NUL and invalid UTF-8
/// (what a database column would refuse or cut).
package final class JSONLineScanner {
    package enum Kind: UInt8 { case string, number, `true`, `false`, null, nested }

    /// Bytes of a key or value: a range of the line, or of `decoded` (a string with escapes).
    package struct Span {
        package var start: Int
        package var end: Int
        package var decoded: Bool
    }

    package struct Member {
        package var key: Span
        package var kind: Kind
        /// A string's text without quotes (decoded); any other value's exact text.
        package var value: Span
        /// The value exactly as written, quotes and escapes included.
        package var written: Range<Int>
        /// A number's value.
        package var number: Double
    }

    package struct Malformed: Error {}

    /// The members of the last line scanned, in order.
    package private(set) var members: [Member] = []
    /// Whether the last line held a backslash, tab or carriage return anywhere: only then can a
    /// field taken from it need escaping in COPY's text format.
    package private(set) var hasSpecialBytes = false
    /// Decoded strings of the last line (those that had escapes), end to end: never longer
    /// than the line, so it is sized before a scan and never moves during one.
    private var decoded = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 4096)
    private var decodedCount = 0

    package init() {
        members.reserveCapacity(16)
    }

    deinit { decoded.deallocate() }

    /// Scans `line` (without its newline). The spans refer to `line`, valid while it is.
    package func scan(_ line: UnsafeBufferPointer<UInt8>) throws(Malformed) {
        // Worked on as a local (no exclusivity check per member), put back at the end.
        var members: [Member] = []
        swap(&members, &self.members)
        defer { swap(&members, &self.members) }
        members.removeAll(keepingCapacity: true)
        decodedCount = 0
        if decoded.count < line.count {
            decoded.deallocate()
            decoded = .allocate(capacity: line.count)
        }
        hasSpecialBytes = false
        var p = 0
        let end = line.count
        try skipSpace(line, &p)
        guard p < end, line[p] == 0x7B else { throw Malformed() }
        p += 1
        try skipSpace(line, &p)
        if p < end, line[p] == 0x7D {
            p += 1
        } else {
            while true {
                try skipSpace(line, &p)
                guard p < end, line[p] == 0x22 else { throw Malformed() }
                let key = try string(line, &p)
                try skipSpace(line, &p)
                guard p < end, line[p] == 0x3A else { throw Malformed() }
                p += 1
                try skipSpace(line, &p)
                members.append(try value(line, &p, key: key))
                try skipSpace(line, &p)
                guard p < end else { throw Malformed() }
                if line[p] == 0x2C { p += 1; continue }
                if line[p] == 0x7D { p += 1; break }
                throw Malformed()
            }
        }
        try skipSpace(line, &p)
        guard p == end else { throw Malformed() }
    }

    /// The first member named `key`.
    package func member(_ key: StaticString, in line: UnsafeBufferPointer<UInt8>) -> Member? {
        let wanted = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        for member in members where member.key.end - member.key.start == wanted.count {
            if bytes(member.key, in: line).elementsEqual(wanted) { return member }
        }
        return nil
    }

    /// The bytes of `span`.
    package func bytes(_ span: Span, in line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        if span.decoded { return UnsafeBufferPointer(rebasing: decoded[span.start..<span.end]) }
        return UnsafeBufferPointer(rebasing: line[span.start..<span.end])
    }

    private func skipSpace(_ line: UnsafeBufferPointer<UInt8>, _ p: inout Int) throws(Malformed) {
        while p < line.count {
            switch line[p] {
            case 0x20: p += 1
            case 0x09, 0x0D: hasSpecialBytes = true; p += 1
            default: return
            }
        }
    }

    /// A string, p on its opening quote; leaves p after the closing one.
    private func string(_ line: UnsafeBufferPointer<UInt8>, _ p: inout Int) throws(Malformed) -> Span {
        p += 1
        let start = p
        var nonASCII = false
        // Eight bytes at a time while none of them is a quote, a backslash, a control byte or
        // non-ASCII (most of a bundle's strings: names, times, units); the byte loop decides
        // the rest.
        let base = UnsafeRawPointer(line.baseAddress!)
        while p + 8 <= line.count {
            let word = base.loadUnaligned(fromByteOffset: p, as: UInt64.self)
            guard !Self.hasSpecialByte(word) else { break }
            p += 8
        }
        while p < line.count {
            let b = line[p]
            if b == 0x22 {
                if nonASCII, String(validating: UnsafeBufferPointer(rebasing: line[start..<p]), as: UTF8.self) == nil { throw Malformed() }
                p += 1
                return Span(start: start, end: p - 1, decoded: false)
            }
            if b == 0x5C { return try escapedString(line, &p, from: start) }
            if b < 0x20 { throw Malformed() }
            if b >= 0x80 { nonASCII = true }
            p += 1
        }
        throw Malformed()
    }

    /// Whether any byte of `word` is a quote, a backslash, below 0x20 or above 0x7F (exact:
    /// the zero-byte test only errs above a byte that is truly zero).
    @inline(__always)
    private static func hasSpecialByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let quote = hasZero(word ^ (ones &* 0x22))
        let backslash = hasZero(word ^ (ones &* 0x5C))
        let control = (word &- ones &* 0x20) & ~word & highs
        return (quote | backslash | control | (word & highs)) != 0
    }

    /// The rest of a string that has escapes, decoded into `decoded`; p on the first backslash.
    private func escapedString(_ line: UnsafeBufferPointer<UInt8>, _ p: inout Int, from start: Int) throws(Malformed) -> Span {
        hasSpecialBytes = true
        let first = decodedCount
        func append(_ byte: UInt8) {
            decoded[decodedCount] = byte
            decodedCount += 1
        }
        for i in start..<p { append(line[i]) }
        while p < line.count {
            let b = line[p]
            if b == 0x22 {
                p += 1
                let span = Span(start: first, end: decodedCount, decoded: true)
                guard String(validating: UnsafeBufferPointer(rebasing: decoded[first..<decodedCount]), as: UTF8.self) != nil else { throw Malformed() }
                return span
            }
            if b < 0x20 { throw Malformed() }
            guard b == 0x5C else { append(b); p += 1; continue }
            p += 1
            // NUL: no database column takes it (PostgreSQL refuses it, SQLite would cut the text).
            guard let scalar = JSONEscape.decode(UnsafeRawBufferPointer(line), &p), scalar.value != 0 else { throw Malformed() }
            for byte in UTF8.encode(scalar)! { append(byte) }
        }
        throw Malformed()
    }

    private func value(_ line: UnsafeBufferPointer<UInt8>, _ p: inout Int, key: Span) throws(Malformed) -> Member {
        guard p < line.count else { throw Malformed() }
        let start = p
        func member(_ kind: Kind, _ value: Span, number: Double = 0) -> Member {
            Member(key: key, kind: kind, value: value, written: start..<p, number: number)
        }
        switch line[p] {
        case 0x22:
            let text = try string(line, &p)
            return member(.string, text)
        case 0x7B, 0x5B:
            try skipNested(line, &p)
            return member(.nested, Span(start: start, end: p, decoded: false))
        case 0x74:
            try word("true", line, &p)
            return member(.true, Span(start: start, end: p, decoded: false))
        case 0x66:
            try word("false", line, &p)
            return member(.false, Span(start: start, end: p, decoded: false))
        case 0x6E:
            try word("null", line, &p)
            return member(.null, Span(start: start, end: p, decoded: false))
        default:
            while p < line.count, Self.isNumberByte(line[p]) { p += 1 }
            guard let number = JSONNumber.value(UnsafeBufferPointer(rebasing: line[start..<p])) else { throw Malformed() }
            return member(.number, Span(start: start, end: p, decoded: false), number: number)
        }
    }

    private static func isNumberByte(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2B || c == 0x2E || c == 0x65 || c == 0x45
    }

    private func word(_ word: StaticString, _ line: UnsafeBufferPointer<UInt8>, _ p: inout Int) throws(Malformed) {
        let count = word.utf8CodeUnitCount
        guard line.count - p >= count,
              UnsafeBufferPointer(rebasing: line[p..<p + count]).elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: count)) else {
            throw Malformed()
        }
        p += count
    }

    /// A nested object or array, skipped with strings respected; p after its end.
    private func skipNested(_ line: UnsafeBufferPointer<UInt8>, _ p: inout Int) throws(Malformed) {
        let start = p
        var depth = 0
        var inString = false
        var nonASCII = false
        while p < line.count {
            let b = line[p]
            if b >= 0x80 { nonASCII = true }
            if b == 0x09 || b == 0x0D { hasSpecialBytes = true }
            // A backslash anywhere (JSON allows it only in strings; the database judges the
            // rest) must be escaped for COPY.
            if b == 0x5C { hasSpecialBytes = true }
            if inString {
                if b == 0x5C {
                    // The escaped byte is skipped, but still counts for the UTF-8 check.
                    if p + 1 < line.count, line[p + 1] >= 0x80 { nonASCII = true }
                    p += 2
                    continue
                }
                if b == 0x22 { inString = false }
            } else if b == 0x22 {
                inString = true
            } else if b == 0x7B || b == 0x5B {
                depth += 1
            } else if b == 0x7D || b == 0x5D {
                depth -= 1
                if depth == 0 {
                    p += 1
                    if nonASCII, String(validating: UnsafeBufferPointer(rebasing: line[start..<p]), as: UTF8.self) == nil { throw Malformed() }
                    return
                }
            }
            p += 1
        }
        throw Malformed()
    }
}

/// JSON numbers: the grammar, and a value within a double's normal range.
package enum JSONNumber {
    private static let powersOfTen: [Double] = (0...22).map { pow10($0) }

    private static func pow10(_ n: Int) -> Double {
        var value = 1.0
        for _ in 0..<n { value *= 10 }
        return value
    }

    /// The value of `text` if it is a JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)
    /// whose value is finite and zero or at least 1e-300 in magnitude; nil otherwise.
    package static func value(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var p = 0
        let end = text.count
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        func digitRun(fraction: Bool) -> Int {
            let start = p
            while p < end, text[p] >= 0x30, text[p] <= 0x39 {
                if digits < 19 { mantissa = mantissa * 10 + UInt64(text[p] - 0x30) }
                if mantissa > 0 || text[p] != 0x30 { digits += 1 }
                if fraction { fractionDigits += 1 }
                p += 1
            }
            return p - start
        }
        let negative = p < end && text[p] == 0x2D
        if negative { p += 1 }
        guard p < end else { return nil }
        if text[p] == 0x30 { p += 1 } else if digitRun(fraction: false) == 0 { return nil }
        if p < end, text[p] == 0x2E {
            p += 1
            guard digitRun(fraction: true) > 0 else { return nil }
        }
        var hasExponent = false
        if p < end, text[p] == 0x65 || text[p] == 0x45 {
            hasExponent = true
            p += 1
            if p < end, text[p] == 0x2B || text[p] == 0x2D { p += 1 }
            let start = p
            while p < end, text[p] >= 0x30, text[p] <= 0x39 { p += 1 }
            guard p > start else { return nil }
        }
        guard p == end else { return nil }
        // Exact and correctly rounded: an integer below 2^53 divided by an exact power of ten.
        if !hasExponent, digits <= 15, fractionDigits <= 22 {
            let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
            return negative ? -magnitude : magnitude
        }
        guard let number = Double(String(decoding: text, as: UTF8.self)), number.isFinite, number == 0 || abs(number) >= 1e-300 else { return nil }
        return number
    }
}
