@testable import Importers
import Testing
import VaultEvents

/// The tokenizer parses each chunk where it lies and completes only a token carried over from
/// the last one (`XMLTokenizer.feed`): how the bytes are cut must change neither the events nor
/// where an error is reported.
@Suite struct XMLFeedTests {
    private static let record = #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="A > B’s Watch" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch&gt;" unit="count" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:01:00 +0100" value="%d"/>"#

    private static func document(records: Int, tail: String = "</HealthData>\n") -> [UInt8] {
        var text = "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE HealthData [\n<!ELEMENT HealthData (Record)*>\n<!ATTLIST Record type CDATA #REQUIRED>\n]>\n<HealthData locale=\"en_US\">\n"
        for i in 0..<records { text += " " + record.replacingOccurrences(of: "%d", with: "\(i + 1)") + "\n" }
        return Array((text + tail).utf8)
    }

    /// The events, or the error's message and place, of `bytes` fed in chunks of `sizes` in turn.
    private static func outcome(_ bytes: [UInt8], chunks sizes: [Int]) -> Result<[VaultEvent], XMLSyntaxError> {
        do {
            return .success(try ImportFuzzTests.parse(bytes, chunks: sizes).events)
        } catch let error as XMLSyntaxError {
            return .failure(error)
        } catch {
            Issue.record("unexpected \(error)")
            return .success([])
        }
    }

    private static let cuts: [[Int]] = [[1], [2], [3], [5, 1], [7], [64], [333], [1000, 1], [4096]]

    @Test func howTheBytesAreCutChangesNothing() throws {
        let bytes = Self.document(records: 40)
        let whole = Self.outcome(bytes, chunks: [bytes.count])
        guard case .success(let events) = whole else { Issue.record("\(whole)"); return }
        #expect(events.count == 40)
        for cut in Self.cuts {
            #expect(Self.outcome(bytes, chunks: cut) == whole, "chunks of \(cut)")
        }
    }

    @Test func anErrorIsReportedAtTheSamePlaceHoweverTheBytesAreCut() {
        for tail in ["<Record type=\"x\" value=\"1\" <broken/>\n</HealthData>\n", "<Record type=\"x\"", " <Open>\n"] {
            let bytes = Self.document(records: 12, tail: tail)
            let whole = Self.outcome(bytes, chunks: [bytes.count])
            guard case .failure(let error) = whole else { Issue.record("no error for \(tail)"); continue }
            #expect(error.location.line > 1)
            for cut in Self.cuts {
                #expect(Self.outcome(bytes, chunks: cut) == whole, "chunks of \(cut), tail \(tail)")
            }
        }
    }
}
