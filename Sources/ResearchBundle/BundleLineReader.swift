import HealthModel

/// Reads the NDJSON lines `BundleLineWriter` writes back into `BundleLine`s: a figure when the
/// line names a `metric`, else a raw line whose members after the common ones are its fields, in
/// their order. Numbers keep their written form (`12.50` reads back as 1250 hundredths).
public struct BundleLineReader {
    /// Why a line is not a bundle line; the caller names the file and line.
    public struct Malformed: Error, Equatable {
        public var reason: String

        public init(reason: String) { self.reason = reason }
    }

    private let scanner = JSONLineScanner()
    private let nested = JSONLineScanner()

    public init() {}

    /// Reads one line (without its newline).
    public func read(_ line: UnsafeBufferPointer<UInt8>) throws(Malformed) -> BundleLine {
        do { try scanner.scan(line) } catch { throw Malformed(reason: "not a JSON object") }
        let category = try string("category", in: line)
        if scanner.member("metric", in: line) != nil {
            var figure = AggregateLine(category: category, metric: try string("metric", in: line), period: try string("period", in: line),
                                       value: try optionalNumber("value", in: line), unit: try string("unit", in: line),
                                       samples: 0)
            figure.min = try optionalNumber("min", in: line)
            figure.max = try optionalNumber("max", in: line)
            guard let samples = scanner.member("samples", in: line), samples.kind == .number, let count = Int(exactly: samples.number) else {
                throw Malformed(reason: "no whole number of samples")
            }
            figure.samples = count
            return .figure(figure)
        }
        var record = RecordLine(category: category, type: try string("type", in: line), start: try time("start", in: line),
                                end: try time("end", in: line), value: .none, unit: nil)
        if let value = scanner.member("value", in: line) {
            switch value.kind {
            case .number: record.value = .decimal(try Self.decimal(scanner.bytes(value.value, in: line)))
            case .string: record.value = .text(text(value.value, in: line))
            case .null: record.value = .none
            default: throw Malformed(reason: "value is neither a number, a text nor null")
            }
        }
        if let unit = scanner.member("unit", in: line), unit.kind == .string { record.unit = text(unit.value, in: line) }
        if let clipped = scanner.member("clipped", in: line) {
            guard clipped.kind == .true else { throw Malformed(reason: "clipped is not true") }
            record.clipped = true
        }
        let common: Set<String> = ["category", "type", "start", "end", "value", "unit", "clipped"]
        for member in scanner.members {
            let name = text(member.key, in: line)
            if common.contains(name) { continue }
            let bytes = scanner.bytes(member.value, in: line)
            switch member.kind {
            case .number: record.fields.append(.init(name, .number(member.number)))
            case .string: record.fields.append(.init(name, .text(text(member.value, in: line))))
            case .nested where bytes.first == 0x7B: record.fields.append(.init(name, .object(try object(bytes, name: name))))
            case .nested: record.fields.append(.init(name, .thousandths(try thousandths(bytes, name: name))))
            default: throw Malformed(reason: "\(name) is neither a number, a text, an object nor an array")
            }
        }
        return .record(record)
    }

    private func text(_ span: JSONLineScanner.Span, in line: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: scanner.bytes(span, in: line), as: UTF8.self)
    }

    private func string(_ key: StaticString, in line: UnsafeBufferPointer<UInt8>) throws(Malformed) -> String {
        guard let member = scanner.member(key, in: line), member.kind == .string else { throw Malformed(reason: "no \(key) text") }
        return text(member.value, in: line)
    }

    private func optionalNumber(_ key: StaticString, in line: UnsafeBufferPointer<UInt8>) throws(Malformed) -> Double? {
        guard let member = scanner.member(key, in: line), member.kind != .null else { return nil }
        guard member.kind == .number else { throw Malformed(reason: "\(key) is not a number") }
        return member.number
    }

    private func time(_ key: StaticString, in line: UnsafeBufferPointer<UInt8>) throws(Malformed) -> HealthTimestamp? {
        guard let member = scanner.member(key, in: line) else { throw Malformed(reason: "no \(key)") }
        if member.kind == .null { return nil }
        guard member.kind == .string,
              let t = HealthTimestamp.parseISO8601(UnsafeRawBufferPointer(scanner.bytes(member.value, in: line))) else {
            throw Malformed(reason: "\(key) is not a time with its offset")
        }
        return t
    }

    /// A flat object of texts (a record's attributes or metadata), in its order.
    private func object(_ bytes: UnsafeBufferPointer<UInt8>, name: String) throws(Malformed) -> [MetadataEntry] {
        do { try nested.scan(bytes) } catch { throw Malformed(reason: "\(name) is not an object") }
        var entries: [MetadataEntry] = []
        for member in nested.members {
            guard member.kind == .string else { throw Malformed(reason: "\(name) holds a value that is not a text") }
            entries.append(MetadataEntry(key: String(decoding: nested.bytes(member.key, in: bytes), as: UTF8.self),
                                         value: String(decoding: nested.bytes(member.value, in: bytes), as: UTF8.self)))
        }
        return entries
    }

    /// An array of decimals with at most three places, as thousandths.
    private func thousandths(_ bytes: UnsafeBufferPointer<UInt8>, name: String) throws(Malformed) -> [Int64] {
        guard bytes.count >= 2, bytes.first == 0x5B, bytes.last == 0x5D else { throw Malformed(reason: "\(name) is not an array") }
        let inner = UnsafeBufferPointer(rebasing: bytes[1..<(bytes.count - 1)])
        var values: [Int64] = []
        var start = inner.startIndex
        while start < inner.endIndex {
            var end = start
            while end < inner.endIndex, inner[end] != 0x2C { end += 1 }
            var a = start, b = end
            while a < b, inner[a] == 0x20 { a += 1 }
            while b > a, inner[b - 1] == 0x20 { b -= 1 }
            if a == b, values.isEmpty, end == inner.endIndex { break }  // `[]`
            let d = try Self.decimal(UnsafeBufferPointer(rebasing: inner[a..<b]))
            guard d.exact, d.scale <= 3 else { throw Malformed(reason: "\(name) holds a number finer than a thousandth") }
            var v = d.mantissa
            for _ in Int(d.scale)..<3 { v *= 10 }
            values.append(v)
            start = end + 1
        }
        return values
    }

    /// A number as written: its digits and places kept (`12.50` is 1250 hundredths), an
    /// exponent or more than fifteen digits read as a double.
    static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) throws(Malformed) -> DecimalValue {
        var i = 0, negative = false, mantissa: Int64 = 0, digits = 0, scale = 0, point = false
        if i < bytes.count, bytes[i] == 0x2D { negative = true; i += 1 }
        while i < bytes.count {
            let c = bytes[i]
            if c >= 0x30, c <= 0x39 {
                digits += 1
                guard digits <= 15 else { break }
                mantissa = mantissa * 10 + Int64(c - 0x30)
                if point { scale += 1 }
            } else if c == 0x2E, !point {
                point = true
            } else {
                break
            }
            i += 1
        }
        if i == bytes.count, digits > 0, digits <= 15 {
            return DecimalValue(mantissa: negative ? -mantissa : mantissa, scale: UInt8(scale))
        }
        guard let value = JSONNumber.value(bytes) else { throw Malformed(reason: "not a number") }
        return DecimalValue(double: value)
    }
}
