import Foundation
import NIOCore
import ResearchBundle
@testable import StudyStore
import TestSupport
import Testing

/// The study load's rows made from a bundle's lines, without a database: COPY text, line
/// identities, the line filter, and when the withdrawal pass may be skipped. The loads
/// themselves, into SQLite and PostgreSQL, run `vaultctl` (`VaultctlTests/StudyLoadTests`).
@Suite struct StudyRowTests {
    /// The withdrawal pass (a scan of the participant's rows) is skipped only when no row can be
    /// outside the latest consents: the bundle is the latest, brought nothing outside its own
    /// consents, and those keep everything the consents before them kept.
    @Test func theWithdrawalPassIsSkippedOnlyWhenNothingCanBeOutside() throws {
        func consents(_ spans: [(String, String, String?, String?)]) throws -> String {
            let receipts = spans.enumerated().map { i, span in
                ConsentReceipt(id: "c\(i)", at: Date(timeIntervalSince1970: 0), recipient: "lab", categories: [span.0], granularity: span.1,
                               from: span.2, to: span.3, expires: nil, purpose: nil)
            }
            return String(decoding: try JSONEncoder().encode(receipts), as: UTF8.self)
        }
        let wide = try consents([("heart", "raw", nil, nil), ("activity", "daily", "2024-01-01", "2024-12-31")])
        let narrow = try consents([("heart", "raw", "2024-03-01", nil)])
        let otherGranularity = try consents([("heart", "daily", nil, nil)])
        let looseDays = try consents([("heart", "raw", "2024-1-01", "2024-12-31")])
        #expect(try Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 0, latest: wide, previous: nil))
        #expect(try Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 0, latest: wide, previous: narrow))
        #expect(try !Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 0, latest: narrow, previous: wide))
        #expect(try !Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 0, latest: wide, previous: otherGranularity))
        #expect(try !Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 1, latest: wide, previous: nil))
        #expect(try !Coverage.nothingToWithdraw(isLatest: false, rowsOutside: 0, latest: wide, previous: nil))
        // Days the database would read as dates but the rows were not compared with as bytes.
        #expect(try !Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 0, latest: looseDays, previous: nil))
        #expect(try !Coverage.nothingToWithdraw(isLatest: true, rowsOutside: 0, latest: wide, previous: looseDays))
    }

    /// A batch of the raw `heart` lines given, in order.
    static func heartBatch(_ lines: [String]) throws -> StudyRowBatch {
        let file = StudyRowBatch.FileFacts(category: "heart", granularity: "raw")
        let scanner = JSONLineScanner()
        var batch = StudyRowBatch()
        for (i, line) in lines.enumerated() {
            try Array(line.utf8).withUnsafeBufferPointer { try batch.append(line: $0, scanner: scanner, file: file, ordinal: i + 1) }
        }
        return batch
    }

    /// Rows become COPY text exactly: tabs between fields, `\N` for null, the suffix, a newline,
    /// and backslash escapes only in rows that need them.
    @Test func copyTextRowsAreExact() throws {
        let batch = try Self.heartBatch([
            #"{"category":"heart","type":"HKQuantityTypeIdentifierHeartRate","start":"2024-01-01T07:06:00+01:00","end":"2024-01-01T07:06:00+01:00","value":71,"unit":"count/min"}"#,
            #"{"category":"heart","type":"HKCharacteristicTypeIdentifierBloodType","start":null,"value":"A\\+","note":"a\tb\r\nc"}"#,
        ])
        var buffer = ByteBuffer()
        batch.arena.withUnsafeBufferPointer { arena in
            CopyText.append(0, CopyText.directFields, of: batch, arena: arena, suffix: Array("\tfp\t1".utf8), to: &buffer)
            CopyText.append(1, CopyText.directFields, of: batch, arena: arena, to: &buffer)
        }
        let hash0 = batch.withField(0, .lineHash) { String(decoding: $0!, as: UTF8.self) }
        let hash1 = batch.withField(1, .lineHash) { String(decoding: $0!, as: UTF8.self) }
        #expect(buffer.readString(length: buffer.readableBytes) ==
                "heart\tHKQuantityTypeIdentifierHeartRate\t2024-01-01\t2024-01-01T07:06:00+01:00\t2024-01-01T07:06:00+01:00\t60\t71\t\\N\tcount/min\tf\t\\N\t\(hash0)\tfp\t1\n"
                + "heart\tHKCharacteristicTypeIdentifierBloodType\t\\N\t\\N\t\\N\t\\N\t\\N\tA\\\\+\t\\N\tf\t{\"note\":\"a\\\\tb\\\\r\\\\nc\"}\t\(hash1)\n")
    }

    /// The filter of lines seen never forgets a line of its bundle, forgets them all when the
    /// next bundle begins, and raises next to no false alarms at the size the manifest announces
    /// (about one in 30 million lines; a few in a million past its largest size).
    @Test func theLineFilterIsSizedToTheBundle() {
        let filter = LineBloomFilter()
        let seed = TestSeed()
        var generator = seed.generator
        for lines in [80_000, 100, 2_000_000, 5_000] {
            filter.reset(expectedLines: lines)
            let hashes = (0..<lines).map { _ in generator.next() as UInt64 }
            let alarms = hashes.filter { filter.insert($0) }.count
            #expect(hashes.allSatisfy { filter.insert($0) }, "every line of the bundle is remembered")
            #expect(alarms <= lines / 10_000 + 2, "\(alarms) false alarms in \(lines) lines, \(seed)")
        }
        filter.reset(expectedLines: 10)
        #expect(!filter.insert(42) && filter.insert(42))
    }

    /// A line's identity (its hash) is what the first loader computed from the same content, so a
    /// study loaded before this reader still recognises lines it holds; an escaped string and its
    /// plain spelling are the same line.
    @Test func lineHashesAreStable() throws {
        let batch = try Self.heartBatch([
            #"{"category":"heart","type":"HKQuantityTypeIdentifierHeartRate","start":"2024-01-01T07:06:00+01:00","end":"2024-01-01T07:06:00+01:00","value":71,"unit":"count/min"}"#,
            #"{"category":"heart","type":"HKQuantityTypeIdentifierHeartRate","start":"2024-01-01T07:06:00+01:00","end":"2024-01-01T07:06:00+01:00","value":71,"unit":"count\/min"}"#,
            #"{"category":"heart","type":"HKCategoryTypeIdentifierHighHeartRateEvent","start":"2024-03-31T01:30:00-04:30","end":"2024-03-31T01:31:00-04:30","value":"HKCategoryValueNotApplicable","metadata":{"HKHeartRateEventThreshold":"120 count/min"},"clipped":true}"#,
            #"{"category":"heart","type":"HKCharacteristicTypeIdentifierBloodType","start":null,"value":"A+","note":"caf\u00e9\t\""}"#,
        ])
        func text(_ row: Int, _ field: StudyRowBatch.Field) -> String? {
            batch.withField(row, field) { $0.map { String(decoding: $0, as: UTF8.self) } }
        }
        // FNV-1a 64 of the fields as the first loader (StudyRow, 2026-11-25) hashed them.
        #expect(text(0, .lineHash) == "3b9e09cce34f9bb9")
        #expect(text(1, .lineHash) == text(0, .lineHash))
        #expect(text(2, .lineHash) == "2af5f976cfabf4dd")
        #expect(text(3, .lineHash) == "6f69aeea9466bd13")
        #expect(batch.kinds == [.sample, .sample, .sample, .undated])
        #expect(text(0, .day) == "2024-01-01" && text(0, .utcOffset) == "60" && text(2, .utcOffset) == "-270" && text(3, .utcOffset) == nil)
        #expect(text(2, .fields) == #"{"metadata":{"HKHeartRateEventThreshold":"120 count/min"}}"# && text(2, .clipped) == "t")
        #expect(text(3, .fields) == #"{"note":"café\t\""}"# && batch.needsEscaping == [false, true, false, true])
        #expect(text(0, .value) == "71" && text(3, .valueText) == "A+" && text(3, .ordinal) == "4")
        let months: [Int32] = [24288, 24288, 24290, -1]
        #expect(batch.months == months, "year * 12 + month - 1")
    }
}
