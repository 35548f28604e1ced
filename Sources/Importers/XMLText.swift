/// Decoding of attribute values and text: predefined and numeric character references, and
/// removal of the control characters some exports carry (`\u{0B}` inside device names), which
/// XML 1.0 forbids and which mean nothing in a value.
enum XMLText {
    struct Decoded {
        var bytes: [UInt8]
        /// Control characters removed.
        var controlsRemoved: Int
    }

    /// Decodes `raw`; `nil` when a reference is malformed.
    static func decode(_ raw: UnsafeRawBufferPointer) -> Decoded? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var removed = 0
        var i = 0
        while i < raw.count {
            let b = raw[i]
            if b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D {
                removed += 1
                i += 1
                continue
            }
            guard b == 0x26 else {
                out.append(b)
                i += 1
                continue
            }
            guard let semicolon = raw[(i + 1)...].firstIndex(of: 0x3B), semicolon - i <= 12 else { return nil }
            let name = raw[(i + 1)..<semicolon]
            switch Array(name) {
            case Array("amp".utf8): out.append(0x26)
            case Array("lt".utf8): out.append(0x3C)
            case Array("gt".utf8): out.append(0x3E)
            case Array("quot".utf8): out.append(0x22)
            case Array("apos".utf8): out.append(0x27)
            default:
                guard name.first == 0x23, let scalar = numericReference(name.dropFirst()) else { return nil }
                if scalar.value < 0x20 && scalar.value != 0x09 && scalar.value != 0x0A && scalar.value != 0x0D {
                    removed += 1
                } else {
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                }
            }
            i = semicolon + 1
        }
        return Decoded(bytes: out, controlsRemoved: removed)
    }

    private static func numericReference(_ digits: Slice<UnsafeRawBufferPointer>) -> Unicode.Scalar? {
        var value: UInt32 = 0
        var slice = digits[...]
        let hex = slice.first == 0x78 || slice.first == 0x58
        if hex { slice = slice.dropFirst() }
        guard !slice.isEmpty else { return nil }
        for b in slice {
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x61...0x66 where hex: digit = UInt32(b - 0x61 + 10)
            case 0x41...0x46 where hex: digit = UInt32(b - 0x41 + 10)
            default: return nil
            }
            value = value * (hex ? 16 : 10) + digit
            if value > 0x10FFFF { return nil }
        }
        return Unicode.Scalar(value)
    }
}
