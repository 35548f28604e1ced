import Foundation
@testable import HealthModel
import Testing
@testable import Vault
import VaultTestSupport

@Suite struct BundleLinesTests {
    @Test func decimalsKeepTheirWrittenForm() {
        func text(_ d: DecimalValue) -> String {
            var out: [UInt8] = []
            BundleLines.appendDecimal(d, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
        #expect(text(DecimalValue(mantissa: 1250, scale: 2)) == "12.50")
        #expect(text(DecimalValue(mantissa: -5, scale: 3)) == "-0.005")
        #expect(text(DecimalValue(mantissa: 42, scale: 0)) == "42")
        #expect(text(DecimalValue(double: 0.1)) == "0.1")
    }

    @Test func timesCarryTheirOwnOffset() {
        #expect(BundleLines.isoDate(HealthTimestamp(seconds: -1, utcOffset: -4 * 3600)) == "1969-12-31T19:59:59-04:00")
        #expect(BundleLines.isoDate(HealthTimestamp(seconds: 1_711_846_800, utcOffset: 7200)) == "2024-03-31T03:00:00+02:00")
        #expect(BundleLines.isoDate(HealthTimestamp(seconds: 0, utcOffset: 19_800)) == "1970-01-01T05:30:00+05:30")
    }

    @Test func linesAreValidJSONWhateverTheStrings() throws {
        var lines = BundleLines(withCSV: true, aggregated: false)
        let odd = "quote\" backslash\\ newline\n tab\t control\u{01} é 🏃"
        lines.raw(category: "other", type: odd, start: HealthTimestamp(seconds: 0, utcOffset: 0),
                  end: HealthTimestamp(seconds: 60, utcOffset: 0), value: .text(odd), unit: nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines.ndjson.dropLast())) as? [String: Any])
        #expect(object["type"] as? String == odd && object["value"] as? String == odd && object["unit"] is NSNull)
        #expect(String(decoding: lines.csv, as: UTF8.self).contains("\"quote\"\" backslash"))
    }
}
