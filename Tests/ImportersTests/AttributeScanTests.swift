import CByteScan
@testable import Importers
import TestSupport
import Testing

/// The tokenizer scans attribute names and values eight bytes at a time and jumps to a word's
/// lowest flagged byte (`XMLTokenizer.endOrEscapeFlags`, `nameEndFlags`): that byte must be the
/// first one that can end or escape the value (or end the name), wherever it sits, and a word
/// with none must have no flag.
@Suite struct AttributeScanTests {
    private func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    /// The index of the lowest flagged byte, or nil when no byte is flagged.
    private func lowest(_ flags: UInt64) -> Int? {
        flags == 0 ? nil : flags.trailingZeroBitCount >> 3
    }

    private func special(_ byte: UInt8, quote: UInt8) -> Bool {
        byte == quote || byte == 0x26 || byte == 0x3C || byte < 0x20
    }

    private func endsName(_ byte: UInt8) -> Bool {
        byte == 0x3D || byte == 0x3E || byte == 0x2F || byte <= 0x20
    }

    @Test func everyByteAtEveryPlaceIsSeen() {
        for quote: UInt8 in [0x22, 0x27] {
            for filler: UInt8 in [0x61, 0x21, 0xE2, 0x7F, 0x80, 0xFF] {
                for position in 0..<8 {
                    for byte in UInt8.min...UInt8.max {
                        var bytes = [UInt8](repeating: filler, count: 8)
                        bytes[position] = byte
                        #expect(lowest(XMLTokenizer.endOrEscapeFlags(word(bytes), quote: quote)) == (special(byte, quote: quote) ? position : nil),
                                "byte \(byte) at \(position) among \(filler), quote \(quote)")
                        #expect(lowest(XMLTokenizer.nameEndFlags(word(bytes))) == (endsName(byte) ? position : nil),
                                "byte \(byte) at \(position) among \(filler) in a name")
                    }
                }
            }
        }
    }

    @Test func randomWordsFlagTheirFirstSpecialByte() {
        let seed = TestSeed()
        var generator = seed.generator
        for _ in 0..<50_000 {
            // Bytes drawn mostly from the special ones, so that words hold several.
            let pool: [UInt8] = [0x22, 0x27, 0x26, 0x3C, 0x3D, 0x3E, 0x2F, 0x20, 0x09, 0x00, 0x1F, 0x21, 0x61, 0x80, 0xE2, 0xFF]
            let bytes = (0..<8).map { _ in Bool.random(using: &generator) ? pool.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator) }
            let quote: UInt8 = Bool.random(using: &generator) ? 0x22 : 0x27
            #expect(lowest(XMLTokenizer.endOrEscapeFlags(word(bytes), quote: quote)) == bytes.firstIndex { special($0, quote: quote) }, "\(bytes), \(seed)")
            #expect(lowest(XMLTokenizer.nameEndFlags(word(bytes))) == bytes.firstIndex(where: endsName), "\(bytes), \(seed)")
        }
    }

    /// The sixteen-byte scan (`hv_attribute_value_end`, SSE2 on x86-64) stops at the first byte
    /// that can end or escape a value, wherever it sits in a block or in the last partial one.
    @Test func theVectorScanStopsAtTheFirstSpecialByte() {
        let seed = TestSeed()
        var generator = seed.generator
        for count in [0, 1, 15, 16, 17, 31, 32, 33, 47, 100] {
            for _ in 0..<400 {
                let quote: UInt8 = Bool.random(using: &generator) ? 0x22 : 0x27
                var bytes = (0..<count).map { _ in UInt8.random(in: 0x20...0xFF, using: &generator) }
                // Plain bytes but for a few special ones, so that the first sits anywhere.
                for i in bytes.indices where bytes[i] == 0x22 || bytes[i] == 0x27 || bytes[i] == 0x26 || bytes[i] == 0x3C { bytes[i] = 0x61 }
                for _ in 0..<Int.random(in: 0...2, using: &generator) where count > 0 {
                    bytes[Int.random(in: 0..<count, using: &generator)] = [quote, 0x26, 0x3C, 0x00, 0x09, 0x1F].randomElement(using: &generator)!
                }
                let expected = bytes.firstIndex { special($0, quote: quote) } ?? count
                let found = bytes.withUnsafeBufferPointer { hv_attribute_value_end($0.baseAddress, count, quote) }
                #expect(found == expected, "\(bytes), quote \(quote)")
            }
        }
    }

    @Test func attributeNamesEndWhereTheByteLoopWouldEndThem() {
        let cases: [(String, Int)] = [
            ("type=\"x\"", 4), ("sourceVersion =", 13), ("creationDate\t=", 12), ("a/>", 1), ("value>", 5),
            ("endDate", 7), ("x\u{1}y=", 3), ("müde=", 5), ("abcdefghijklmnop=", 16),
        ]
        for (text, end) in cases {
            let bytes = Array(text.utf8)
            let found = bytes.withUnsafeBytes { XMLTokenizer.attributeNameEnd($0, from: 0) }
            #expect(found == end, "\(text)")
        }
    }
}
