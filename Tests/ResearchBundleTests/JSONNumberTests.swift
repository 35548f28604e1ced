import ResearchBundle
import Testing

/// The bundle lines' number reader (`JSONLineScanner`, `BundleLineReader`).
@Suite struct JSONNumberTests {
    /// Numbers the scanner reads itself (the common short decimals) equal what Swift's own
    /// parser makes of them, and every other number is left to that parser.
    @Test func shortDecimalsParseExactly() {
        for text in ["0", "-0", "71", "409.22", "0.05", "-12.5", "123456789012345", "1234567890123456789", "0.1234567890123456789", "2.5e3", "1E-5", "98.60000000000001"] {
            let parsed = Array(text.utf8).withUnsafeBufferPointer { JSONNumber.value($0) }
            #expect(parsed?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
    }

    /// What JSON's grammar refuses, or a double cannot hold, is no number.
    @Test func notNumbersAreRefused() {
        for text in ["", "-", "01", "1.", ".5", "1e", "+1", "1e400", "0x10", "NaN"] {
            #expect(Array(text.utf8).withUnsafeBufferPointer { JSONNumber.value($0) } == nil, "\(text)")
        }
    }
}
