@testable import Importers
import Testing

/// The tokenizer skips attribute values eight bytes at a time while no byte can end or escape
/// them (`XMLTokenizer.mayEndOrEscape`): it must see every such byte, wherever it sits.
@Suite struct AttributeScanTests {
    private func word(_ bytes: [UInt8]) -> UInt64 {
        bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    private func special(_ byte: UInt8, quote: UInt8) -> Bool {
        byte == quote || byte == 0x26 || byte == 0x3C || byte < 0x20
    }

    @Test func everyByteAtEveryPlaceIsSeen() {
        for quote: UInt8 in [0x22, 0x27] {
            for filler: UInt8 in [0x61, 0x20, 0xE2, 0x7F, 0x80, 0xFF] {
                for position in 0..<8 {
                    for byte in UInt8.min...UInt8.max {
                        var bytes = [UInt8](repeating: filler, count: 8)
                        bytes[position] = byte
                        #expect(XMLTokenizer.mayEndOrEscape(word(bytes), quote: quote) == special(byte, quote: quote),
                                "byte \(byte) at \(position) among \(filler), quote \(quote)")
                    }
                }
            }
        }
    }

    @Test func randomWordsAgreeWithTheBytes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50_000 {
            let bytes = (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let quote: UInt8 = Bool.random(using: &generator) ? 0x22 : 0x27
            #expect(XMLTokenizer.mayEndOrEscape(word(bytes), quote: quote) == bytes.contains { special($0, quote: quote) })
        }
    }
}
