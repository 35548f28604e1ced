import BinaryCoding
import Testing

/// The one decoder of JSON's string escapes: each escape's character, where it leaves off, and
/// what it refuses.
@Suite struct JSONEscapeTests {
    /// Decodes the escape after the backslash that `text` starts with.
    static func decode(_ text: String) -> (scalar: UInt32?, end: Int) {
        let bytes = Array(text.utf8)
        var p = 1
        let scalar = bytes.withUnsafeBytes { JSONEscape.decode($0, &p) }
        return (scalar?.value, p)
    }

    @Test func eachEscapeGivesItsCharacterAndEndsAfterIt() {
        let cases: [(String, UInt32, Int)] = [
            (#"\""#, 0x22, 2), (#"\\"#, 0x5C, 2), (#"\/"#, 0x2F, 2), (#"\b"#, 0x08, 2), (#"\f"#, 0x0C, 2),
            (#"\n"#, 0x0A, 2), (#"\r"#, 0x0D, 2), (#"\t"#, 0x09, 2), (#"\u00e9x"#, 0xE9, 6), (#"\u00E9"#, 0xE9, 6),
            (#"\u0000"#, 0, 6), (#"\ud83d\ude00z"#, 0x1F600, 12), (#"\uFFFF"#, 0xFFFF, 6),
        ]
        for (text, scalar, end) in cases {
            let decoded = Self.decode(text)
            #expect(decoded.scalar == scalar && decoded.end == end, "\(text): \(decoded)")
        }
    }

    @Test func whatIsNoEscapeIsRefused() {
        for text in [#"\x"#, #"\"#, #"\u12"#, #"\u12g4"#, #"\ud83d"#, #"\ud83dx"#, #"\ud83d\n"#, #"\ud83d\u0041"#, #"\ude00"#, #"\U00e9"#] {
            #expect(Self.decode(text).scalar == nil, "\(text)")
        }
    }
}
