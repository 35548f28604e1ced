/// JSON's string escapes (RFC 8259, section 7), the one decoder of them: the companion reader
/// (`JSONPullReader`) and the bundle line scanner (`JSONLineScanner`) both call it, each writing
/// the character into its own buffer and judging it by its own rules (the scanner refuses NUL).
public enum JSONEscape {
    /// The character of the escape whose backslash is just before `p`: `\" \\ \/ \b \f \n \r \t`,
    /// or `\uXXXX` (a high surrogate joined with the `\uXXXX` low one that must follow it). `p`
    /// ends after the escape; nil when it is not one (another letter, a bad hex digit, the bytes
    /// ending, a surrogate without its other half).
    public static func decode(_ bytes: UnsafeRawBufferPointer, _ p: inout Int) -> Unicode.Scalar? {
        guard p < bytes.count else { return nil }
        let letter = bytes[p]
        p += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(letter)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard var value = hex4(bytes, &p) else { return nil }
            if (0xD800..<0xDC00).contains(value) {
                // A surrogate pair: the low half must follow.
                guard p + 1 < bytes.count, bytes[p] == UInt8(ascii: "\\"), bytes[p + 1] == UInt8(ascii: "u") else { return nil }
                p += 2
                guard let low = hex4(bytes, &p), (0xDC00..<0xE000).contains(low) else { return nil }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            }
            // A lone low surrogate is no scalar.
            return Unicode.Scalar(value)
        default:
            return nil
        }
    }

    /// Four hex digits at `p`, which ends after them.
    private static func hex4(_ bytes: UnsafeRawBufferPointer, _ p: inout Int) -> UInt32? {
        guard p + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[p]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            p += 1
        }
        return value
    }
}
