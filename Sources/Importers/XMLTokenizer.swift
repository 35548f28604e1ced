import CByteScan
#if canImport(Glibc)
import Glibc
#endif

/// A place in an input file, for error messages: 1-based line and column (in bytes).
public struct SourceLocation: Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// An XML input that is not well-formed, with where.
struct XMLSyntaxError: Error, Equatable {
    var message: String
    var location: SourceLocation
}

/// One attribute of a start tag: byte ranges into the tokenizer's buffer.
struct XMLAttribute {
    var name: Range<Int>
    var value: Range<Int>
    /// The value holds `&` references or control characters and must go through `XMLText.decode`.
    var needsDecoding: Bool
}

/// What the tokenizer reports. Byte views are valid only during the call.
protocol XMLTokenHandler {
    /// A start tag; `attributes` index into `bytes`. Self-closing tags are followed by `endElement`.
    mutating func startElement(name: UnsafeRawBufferPointer, attributes: [XMLAttribute], bytes: UnsafeRawBufferPointer, tokenizer: borrowing XMLLocator) throws
    mutating func endElement(name: UnsafeRawBufferPointer) throws
    /// Character data that is not only whitespace (entity references still encoded).
    mutating func text(_ bytes: UnsafeRawBufferPointer) throws
}

/// Computes line:column of a byte in the current buffer, only when someone asks (errors, rejects).
struct XMLLocator: ~Copyable {
    let buffer: UnsafeRawBufferPointer
    let linesBefore: Int
    let columnBase: Int
    let offset: Int

    var location: SourceLocation { XMLTokenizer.locate(offset, in: buffer, linesBefore: linesBefore, columnBase: columnBase) }
}

/// A streaming, byte-level XML tokenizer for Apple Health exports and GPX files.
///
/// It is fed chunks (constant memory: only an unfinished tag is carried over) and checks what
/// well-formedness these files need: tags close in order, attributes are quoted, markup ends.
/// The DOCTYPE internal subset is skipped without being parsed, which is how exports whose DTD is
/// itself broken (iOS 16's unclosed `<!ATTLIST`) still read. Character references are decoded
/// on demand by `XMLText`.
struct XMLTokenizer {
    /// A tag longer than this is refused rather than buffered without bound.
    static let maxMarkupLength = 8 << 20
    /// Deeper nesting than this is refused (Apple's exports nest four levels).
    static let maxDepth = 64

    /// The `encoding` of an XML declaration (`<?xml version="1.0" encoding="..."`), if `markup` is one.
    static func declaredEncoding(_ markup: UnsafeRawBufferPointer) -> String? {
        guard markup.starts(with: "<?xml ".utf8) else { return nil }
        let text = String(decoding: markup, as: UTF8.self)
        guard let key = text.range(of: "encoding"), let quote = text[key.upperBound...].first(where: { $0 == "\"" || $0 == "'" }),
              let open = text[key.upperBound...].firstIndex(of: quote),
              let close = text[text.index(after: open)...].firstIndex(of: quote) else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    private var carry: [UInt8] = []
    private var linesBefore = 0
    /// Column of the first byte of `carry` minus one (bytes since the last newline before it).
    private var columnBase = 0
    private var openNames: [UInt64] = []
    private var attributes: [XMLAttribute] = []
    private(set) var sawRoot = false
    /// Whether the first bytes (a possible byte-order mark) have been looked at.
    private var sawStart = false
    private var rootClosed = false

    /// Feeds the next chunk. `final` says no more input follows.
    ///
    /// The chunk is parsed where it lies: only an unfinished token carried over from the last
    /// chunk is completed in `carry`, with as few of the new bytes as it needs, and only the
    /// chunk's own unfinished tail is copied (appending each 1 MiB chunk to the carry copied the
    /// whole export once more on the parser's thread).
    mutating func feed<H: XMLTokenHandler>(_ chunk: UnsafeRawBufferPointer, final: Bool, handler: inout H) throws {
        var input = chunk
        var parsedFinal = false
        if !sawStart {
            // The first bytes may be a byte-order mark, looked at once three are in.
            carry.append(contentsOf: input)
            input = UnsafeRawBufferPointer(start: nil, count: 0)
            guard carry.count >= 3 || final else { return }
            sawStart = true
            // Not counted in columns: editors do not show it.
            if carry.starts(with: [0xEF, 0xBB, 0xBF]) { carry.removeFirst(3) }
            try parseCarry(final: final, handler: &handler)
            parsedFinal = final
        }
        // The carried token is completed up to the next '>' in turn, taking at least as many
        // bytes as are carried, so that a long token is not parsed again for each '>' in it.
        while !carry.isEmpty, let base = input.baseAddress, input.count > 0 {
            let gt = memchr(base, 0x3E, input.count).map { base.distance(to: UnsafeRawPointer($0)) + 1 } ?? input.count
            let take = min(input.count, max(gt, carry.count))
            carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[..<take]))
            input = UnsafeRawBufferPointer(rebasing: input[take...])
            parsedFinal = final && input.isEmpty
            try parseCarry(final: parsedFinal, handler: &handler)
        }
        if input.count > 0 {
            // Nothing is carried: the rest of the chunk is parsed in place.
            let consumed = try parse(input, final: final, handler: &handler)
            advanceLocation(over: UnsafeRawBufferPointer(rebasing: input[..<consumed]))
            carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[consumed...]))
            try checkCarryLength()
        } else if final && !parsedFinal {
            try parseCarry(final: true, handler: &handler)
        }
        if final {
            if !openNames.isEmpty {
                throw XMLSyntaxError(message: "file ends inside an element (truncated?)", location: currentLocation(carry.count))
            }
            if !sawRoot { throw XMLSyntaxError(message: "no root element", location: currentLocation(carry.count)) }
        }
    }

    /// Parses what is carried, keeping only its unfinished tail.
    private mutating func parseCarry<H: XMLTokenHandler>(final: Bool, handler: inout H) throws {
        var buffer: [UInt8] = []
        swap(&buffer, &carry)
        let consumed = try buffer.withUnsafeBytes { try parse($0, final: final, handler: &handler) }
        buffer.withUnsafeBytes { advanceLocation(over: UnsafeRawBufferPointer(rebasing: $0[..<consumed])) }
        buffer.removeFirst(consumed)
        carry = buffer
        try checkCarryLength()
    }

    private func checkCarryLength() throws {
        if carry.count > Self.maxMarkupLength {
            throw XMLSyntaxError(message: "markup longer than \(Self.maxMarkupLength >> 20) MiB", location: currentLocation(0))
        }
    }

    private func currentLocation(_ offset: Int) -> SourceLocation {
        carry.withUnsafeBytes { Self.locate(offset, in: $0, linesBefore: linesBefore, columnBase: columnBase) }
    }

    static func locate(_ offset: Int, in buffer: UnsafeRawBufferPointer, linesBefore: Int, columnBase: Int) -> SourceLocation {
        var line = linesBefore + 1
        var lastNewline = -1
        for i in 0..<min(offset, buffer.count) where buffer[i] == 0x0A {
            line += 1
            lastNewline = i
        }
        let column = lastNewline < 0 ? columnBase + offset + 1 : offset - lastNewline
        return SourceLocation(line: line, column: column)
    }

    private mutating func advanceLocation(over consumed: UnsafeRawBufferPointer) {
        guard let base = consumed.baseAddress, consumed.count > 0 else { return }
        var i = 0
        var lastNewline = -1
        while i < consumed.count, let hit = memchr(base + i, 0x0A, consumed.count - i) {
            let index = base.distance(to: UnsafeRawPointer(hit))
            linesBefore += 1
            lastNewline = index
            i = index + 1
        }
        columnBase = lastNewline < 0 ? columnBase + consumed.count : consumed.count - lastNewline - 1
    }

    /// Parses as much of `buffer` as forms complete tokens; returns how many bytes were consumed.
    private mutating func parse<H: XMLTokenHandler>(_ buffer: UnsafeRawBufferPointer, final: Bool, handler: inout H) throws -> Int {
        let n = buffer.count
        guard let base = buffer.baseAddress else { return 0 }
        var i = 0
        let (lines, column) = (linesBefore, columnBase)
        func fail(_ message: String, at offset: Int) -> XMLSyntaxError {
            XMLSyntaxError(message: message, location: Self.locate(offset, in: buffer, linesBefore: lines, columnBase: column))
        }
        func find(_ byte: UInt8, from start: Int) -> Int? {
            guard start < n, let hit = memchr(base + start, Int32(byte), n - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
        func find(_ pattern: StaticString, from start: Int) -> Int? {
            let p = UnsafeRawBufferPointer(start: pattern.utf8Start, count: pattern.utf8CodeUnitCount)
            var s = start
            while let j = find(p[0], from: s) {
                if j + p.count > n { return nil }
                if memcmp(base + j, p.baseAddress!, p.count) == 0 { return j }
                s = j + 1
            }
            return nil
        }
        func hasPrefix(_ pattern: StaticString, at offset: Int) -> Bool? {
            let count = pattern.utf8CodeUnitCount
            if offset + count > n { return nil }
            return memcmp(base + offset, pattern.utf8Start, count) == 0
        }

        while i < n {
            if buffer[i] != 0x3C { // text up to the next '<'
                guard let lt = find(0x3C, from: i) else {
                    if final {
                        if (i..<n).contains(where: { !Self.isSpace(buffer[$0]) }) {
                            if rootClosed { throw fail("text after the root element", at: i) }
                            try deliverText(buffer, i..<n, handler: &handler, fail: fail)
                        }
                        return n
                    }
                    return i
                }
                try deliverText(buffer, i..<lt, handler: &handler, fail: fail)
                i = lt
                continue
            }
            guard i + 1 < n else { break }
            switch buffer[i + 1] {
            case 0x2F: // </name>
                guard let gt = find(0x3E, from: i + 2) else { break }
                var nameEnd = gt
                while nameEnd > i + 2, Self.isSpace(buffer[nameEnd - 1]) { nameEnd -= 1 }
                let name = UnsafeRawBufferPointer(rebasing: buffer[(i + 2)..<nameEnd])
                guard let open = openNames.popLast() else { throw fail("end tag with no element open", at: i) }
                guard open == Self.hash(name) else {
                    // The bytes are not shown: in damaged input they may be a record's values.
                    throw fail("end tag does not match the open element", at: i)
                }
                try handler.endElement(name: name)
                if openNames.isEmpty { rootClosed = true }
                i = gt + 1
                continue
            case 0x3F: // <? ... ?>
                guard let end = find("?>", from: i + 2) else { break }
                if let encoding = Self.declaredEncoding(UnsafeRawBufferPointer(rebasing: buffer[i..<end])),
                   !["utf-8", "utf8", "us-ascii", "ascii"].contains(encoding.lowercased()) {
                    // Apple Health writes UTF-8; another encoding's bytes would be misread as text.
                    // The name is echoed only when it looks like one (no bytes of the file otherwise).
                    let looksLikeAName = encoding.count <= 40 && encoding.first?.isASCII == true && encoding.first?.isLetter == true
                        && encoding.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
                    let named = looksLikeAName ? "encoding \"\(encoding)\"" : "a non-UTF-8 encoding"
                    throw fail("the file declares \(named); Apple Health exports are UTF-8", at: i)
                }
                i = end + 2
                continue
            case 0x21: // <! ...
                guard let isComment = hasPrefix("<!--", at: i) else { break }
                if isComment {
                    guard let end = find("-->", from: i + 4) else { break }
                    i = end + 3
                    continue
                }
                guard let isCDATA = hasPrefix("<![CDATA[", at: i) else { break }
                if isCDATA {
                    guard let end = find("]]>", from: i + 9) else { break }
                    try handler.text(UnsafeRawBufferPointer(rebasing: buffer[(i + 9)..<end]))
                    i = end + 3
                    continue
                }
                guard let isDoctype = hasPrefix("<!DOCTYPE", at: i) else { break }
                guard isDoctype else { throw fail("unexpected markup declaration", at: i) }
                if sawRoot { throw fail("DOCTYPE inside the document", at: i) }
                // Skip the whole declaration. The internal subset ends at "]" followed by
                // optional spaces and ">"; what is inside is not parsed, so a broken DTD is harmless.
                guard let gt = find(0x3E, from: i + 9) else { break }
                if let bracket = find(0x5B, from: i + 9), bracket < gt {
                    var s = bracket + 1
                    var end: Int?
                    while end == nil, let close = find(0x5D, from: s) {
                        var k = close + 1
                        while k < n, Self.isSpace(buffer[k]) { k += 1 }
                        if k < n, buffer[k] == 0x3E { end = k } else if k >= n { break } else { s = close + 1 }
                    }
                    guard let end else { break }
                    i = end + 1
                } else {
                    i = gt + 1
                }
                continue
            default:
                guard let next = try startTag(buffer, at: i, handler: &handler, fail: fail) else { break }
                i = next
                continue
            }
            // A token is incomplete: wait for more input.
            if final { throw fail("file ends inside markup (truncated?)", at: i) }
            return i
        }
        return min(i, n)
    }

    private mutating func deliverText<H: XMLTokenHandler>(_ buffer: UnsafeRawBufferPointer, _ range: Range<Int>, handler: inout H, fail: (String, Int) -> XMLSyntaxError) throws {
        guard range.contains(where: { !Self.isSpace(buffer[$0]) }) else { return }
        if openNames.isEmpty { throw fail(sawRoot ? "text after the root element" : "text before the root element", range.lowerBound) }
        try handler.text(UnsafeRawBufferPointer(rebasing: buffer[range]))
    }

    /// Parses a start tag at `i`; returns the offset after it, or nil when it is not complete yet.
    private mutating func startTag<H: XMLTokenHandler>(_ buffer: UnsafeRawBufferPointer, at start: Int, handler: inout H, fail: (String, Int) -> XMLSyntaxError) throws -> Int? {
        let n = buffer.count
        guard let base = buffer.baseAddress else { return nil }
        var j = start + 1
        while j < n, !Self.isSpace(buffer[j]), buffer[j] != 0x3E, buffer[j] != 0x2F { j += 1 }
        guard j < n else { return nil }
        let nameRange = (start + 1)..<j
        guard !nameRange.isEmpty, Self.isNameStart(buffer[start + 1]) else { throw fail("malformed start tag", start) }
        if rootClosed { throw fail("a second root element", start) }
        attributes.removeAll(keepingCapacity: true)
        var selfClosing = false
        while true {
            while j < n, Self.isSpace(buffer[j]) { j += 1 }
            guard j < n else { return nil }
            let c = buffer[j]
            if c == 0x3E { j += 1; break }
            if c == 0x2F {
                guard j + 1 < n else { return nil }
                guard buffer[j + 1] == 0x3E else { throw fail("expected '>' after '/'", j) }
                selfClosing = true
                j += 2
                break
            }
            let attributeStart = j
            j = Self.attributeNameEnd(buffer, from: j)
            guard j < n else { return nil }
            var attributeName = attributeStart..<j
            guard !attributeName.isEmpty else { throw fail("malformed attribute", j) }
            while true {
                while j < n, Self.isSpace(buffer[j]) { j += 1 }
                guard j < n else { return nil }
                if buffer[j] == 0x3D { break }
                // A name of several words up to its '=' (`Health Mate App Version="2.6.2"`, as
                // Withings wrote metadata on iOS 8): not XML, but an export never was; the
                // record is fine, and its name is read with its spaces.
                guard Self.isNameStart(buffer[j]) else { throw fail("attribute without '='", j) }
                j = Self.attributeNameEnd(buffer, from: j)
                guard j < n else { return nil }
                attributeName = attributeStart..<j
            }
            j += 1
            while j < n, Self.isSpace(buffer[j]) { j += 1 }
            guard j < n else { return nil }
            let quote = buffer[j]
            guard quote == 0x22 || quote == 0x27 else { throw fail("attribute value without quotes", j) }
            let valueStart = j + 1
            var needsDecoding = false
            var k = valueStart
            // Eight bytes at a time (most of an export's bytes are attribute values): a word's
            // first byte that is the quote, '&', '<' or a control character is found at once and
            // looked at, and the scan goes on after it (a device's `&lt;…&gt;` costs four stops).
            while true {
                #if arch(x86_64)
                // Sixteen bytes a step (SSE2), in C: Swift has no portable byte-mask extraction.
                k += hv_attribute_value_end(base.advanced(by: k).assumingMemoryBound(to: UInt8.self), n - k, quote)
                #else
                while k + 8 <= n {
                    let flags = Self.endOrEscapeFlags(UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: k, as: UInt64.self)), quote: quote)
                    if flags != 0 { k += flags.trailingZeroBitCount >> 3; break }
                    k += 8
                }
                #endif
                guard k < n else { return nil }
                let b = buffer[k]
                if b == quote { break }
                if b == 0x26 || (b < 0x20 && b != 0x09) { needsDecoding = true }
                if b == 0x3C { throw fail("'<' inside an attribute value", k) }
                k += 1
            }
            attributes.append(XMLAttribute(name: attributeName, value: valueStart..<k, needsDecoding: needsDecoding))
            j = k + 1
            if j < n, !Self.isSpace(buffer[j]), buffer[j] != 0x3E, buffer[j] != 0x2F {
                throw fail("attributes must be separated by spaces", j)
            }
        }
        let name = UnsafeRawBufferPointer(rebasing: buffer[nameRange])
        guard openNames.count < Self.maxDepth else { throw fail("elements nested deeper than \(Self.maxDepth)", start) }
        sawRoot = true
        let locator = XMLLocator(buffer: buffer, linesBefore: linesBefore, columnBase: columnBase, offset: start)
        try handler.startElement(name: name, attributes: attributes, bytes: buffer, tokenizer: locator)
        if selfClosing {
            try handler.endElement(name: name)
            if openNames.isEmpty { rootClosed = true }
        } else {
            openNames.append(Self.hash(name))
        }
        return j
    }

    /// Where an attribute's name ends from `start`: the first '=', space, '>' or '/', or the
    /// buffer's end. Eight bytes at a time, as attribute values are.
    @inline(__always) static func attributeNameEnd(_ buffer: UnsafeRawBufferPointer, from start: Int) -> Int {
        let n = buffer.count
        var j = start
        while true {
            while j + 8 <= n {
                let flags = nameEndFlags(UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: j, as: UInt64.self)))
                if flags != 0 { j += flags.trailingZeroBitCount >> 3; break }
                j += 8
            }
            guard j < n else { return n }
            let b = buffer[j]
            if b == 0x3D || isSpace(b) || b == 0x3E || b == 0x2F { return j }
            j += 1  // a control character other than a space: part of the (malformed) name
        }
    }

    /// The high bit of each byte of the little-endian `word` that is `quote`, `&`, `<` or below
    /// 0x20 (a tab too: the caller decides). Exact up to and including the lowest flagged byte;
    /// bytes above it may be flagged too, so only the lowest is to be read.
    ///
    /// Word-at-a-time tests: `(v - 0x01…) & ~v & 0x80…` flags the bytes of `v` that are zero, and
    /// `(v - b…) & ~v & 0x80…` those below `b` (≤ 0x80); a borrow, the only source of a false
    /// flag, starts only at a byte rightly flagged and runs upwards.
    @inline(__always) static func endOrEscapeFlags(_ word: UInt64, quote: UInt8) -> UInt64 {
        let quotes = word ^ (ones &* UInt64(quote)), ampersands = word ^ (ones &* 0x26), angles = word ^ (ones &* 0x3C)
        let zeros = ((quotes &- ones) & ~quotes) | ((ampersands &- ones) & ~ampersands) | ((angles &- ones) & ~angles)
        return (zeros | ((word &- ones &* 0x20) & ~word)) & highs
    }

    /// The high bit of each byte of `word` that is '=', '>', '/' or at most 0x20 (a space, or a
    /// control character: the caller decides), read as `endOrEscapeFlags` is.
    @inline(__always) static func nameEndFlags(_ word: UInt64) -> UInt64 {
        let equals = word ^ (ones &* 0x3D), closes = word ^ (ones &* 0x3E), slashes = word ^ (ones &* 0x2F)
        let zeros = ((equals &- ones) & ~equals) | ((closes &- ones) & ~closes) | ((slashes &- ones) & ~slashes)
        return (zeros | ((word &- ones &* 0x21) & ~word)) & highs
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }
    @inline(__always) static func isNameStart(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b == 0x3A || b >= 0x80 }

    /// FNV-1a of an element name, to match end tags without keeping names.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h ^ UInt64(bytes.count)
    }
}
