import HealthModel
@testable import Importers
import TestSupport
import Testing

/// The date memo answers exactly what parsing answers, for repeated, alternating, new, malformed
/// and differently sized dates alike.
@Suite struct ExportDateMemoTests {
    @Test func answersAsParsingDoes() {
        let dates = [
            "2024-01-01 14:25:33 +0100", "2024-01-01 14:26:33 +0100", "2024-01-01 14:26:33 +0100",
            "2024-01-01 14:25:33 +0100", "2024-01-01 14:26:33 +0100", "2024-01-01 14:26:33 +0200",
            "2024-02-30 14:26:33 +0100", "2024-01-01 14:26:33 +0100", "20240101142633+0100",
            "2024-01-01 14:26:33 +01", "2024-06-02 20:45:46 +0200", "2024-06-02 20:45:46 -0200",
            "2024-06-02 20:45:46 +0200", "2024-13-02 20:45:46 +0200", "2024-06-02 20:45:46 +0200",
        ]
        var memo = ExportDateMemo()
        let seed = TestSeed()
        var rng = seed.generator
        for text in dates + (0..<500).map({ _ in dates.randomElement(using: &rng)! }) {
            let bytes = Array(text.utf8)
            let expected = bytes.withUnsafeBytes { HealthTimestamp.parseExportDate($0) }
            #expect(bytes.withUnsafeBytes { memo.parse($0) } == expected, "\(text), \(seed)")
        }
    }
}
