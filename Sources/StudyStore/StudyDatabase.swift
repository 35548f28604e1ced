import Foundation
import ResearchBundle

/// A bundle whose manifest checked out, about to be loaded.
struct PendingBundle {
    var path: String
    /// BLAKE2b-256 of the bundle file (hex): the `bundleHash` of the sender's `history`.
    var hash: String
    var fingerprint: String
    var label: String?
    var recipient: String
    /// The manifest's `createdAt`, as `YYYY-MM-DDTHH:MM:SSZ`.
    var madeAt: String
    var follows: String?
    /// The manifest's consent receipts (FHIR `Consent`), as JSON.
    var consents: String
}

/// What loading one bundle changed.
struct LoadCounts: Equatable {
    /// Rows new to the database, and figures a later bundle changed.
    var added = 0
    /// Lines the database already held.
    var duplicates = 0
    /// Rows deleted because the participant's latest consents no longer cover them.
    var withdrawn = 0
}

/// One study database. `load` is all or nothing: it stages the rows `BundleRows` gives, which
/// ends only once the bundle checked out whole, and commits once, or keeps nothing.
protocol StudyDatabase: AnyObject {
    /// Creates the tables if missing; refuses a database of a later schema.
    func prepare() async throws
    /// The data lines of an already loaded bundle, nil when it was never loaded.
    func loadedLines(bundle hash: String) async throws -> Int?
    func load(_ bundle: PendingBundle, rows: BundleRows) async throws -> LoadCounts
    func close() async
}

/// What a participant's latest consents cover (`raw`, `daily` or `hourly`, per category and
/// data period): every row outside it is withdrawn.
struct Coverage {
    struct Span {
        var category: String
        var granularity: String
        /// `YYYY-MM-DD`, inclusive; open ends are the far past and future.
        var from: String
        var to: String
    }
    var spans: [Span]

    init(consentsJSON: String) throws {
        self.init(receipts: try JSONDecoder().decode([ConsentReceipt].self, from: Data(consentsJSON.utf8)))
    }

    init(receipts: [ConsentReceipt]) {
        spans = receipts.flatMap { receipt in
            receipt.categories.map {
                Span(category: $0, granularity: receipt.granularity ?? "raw", from: receipt.dataFrom ?? "0001-01-01", to: receipt.dataTo ?? "9999-12-31")
            }
        }
    }

    /// Whether every row this coverage keeps, `other` keeps too: each span lies within one of
    /// `other`'s of the same category and granularity.
    func isWithin(_ other: Coverage) -> Bool {
        spans.allSatisfy { span in
            other.spans.contains { $0.category == span.category && $0.granularity == span.granularity && $0.from <= span.from && $0.to >= span.to }
        }
    }

    /// Whether the withdrawal pass can be skipped for a participant's bundle that just loaded:
    /// it is their latest, every row it brought is inside its own consents, and those keep all
    /// that the consents before it kept (the rows held were inside those, as every load leaves
    /// them). `previous` is the consents of the latest bundle before it, nil when it is the first.
    /// Only consents whose days are all written `YYYY-MM-DD` qualify: the rows were judged by
    /// comparing those bytes, the database compares dates.
    static func nothingToWithdraw(isLatest: Bool, rowsOutside: Int, latest: String, previous: String?) throws -> Bool {
        guard isLatest, rowsOutside == 0 else { return false }
        let now = try Coverage(consentsJSON: latest)
        guard now.hasPlainDays else { return false }
        guard let previous else { return true }
        let before = try Coverage(consentsJSON: previous)
        return before.hasPlainDays && before.isWithin(now)
    }

    /// Whether every span's days are `YYYY-MM-DD`, digits where digits go.
    var hasPlainDays: Bool {
        spans.allSatisfy { span in
            [span.from, span.to].allSatisfy { day in
                Array(day.utf8).withUnsafeBufferPointer { $0.count == 10 && StudyRowBatch.month(of: $0) != nil }
            }
        }
    }

    /// The predicate that keeps a row of `alias` (with `category`, `day` and, for aggregates,
    /// `granularity` columns) covered by a span in `study_coverage`.
    static func covered(_ alias: String, granularity: String?, dayCast: String) -> String {
        let granularityTest = granularity.map { "c.granularity = '\($0)'" } ?? "c.granularity = \(alias).granularity"
        return "EXISTS (SELECT 1 FROM study_coverage c WHERE c.category = \(alias).category AND \(granularityTest) AND \(alias).day >= c.from_day\(dayCast) AND \(alias).day <= c.to_day\(dayCast))"
    }

    /// Records are undated: covered while their category is granted raw.
    static let recordCovered = "EXISTS (SELECT 1 FROM study_coverage c WHERE c.category = r.category AND c.granularity = 'raw')"

    /// The tables withdrawals delete from: each with its alias, the granularity its rows have,
    /// and the predicate that keeps a row (`dayCast` turns the coverage's text days into the
    /// table's day type).
    static func tables(dayCast: String) -> [(table: String, alias: String, granularity: String, covered: String)] {
        [
            ("samples", "s", "'raw'", covered("s", granularity: "raw", dayCast: dayCast)),
            ("records", "r", "'raw'", recordCovered),
            ("aggregates", "a", "a.granularity", covered("a", granularity: nil, dayCast: dayCast)),
        ]
    }
}

enum StudyClock {
    /// Now as `YYYY-MM-DDTHH:MM:SSZ`.
    static func now() -> String { ISO8601DateFormatter().string(from: Date()) }
}

/// Test hooks that stop a load at a chosen point and wait to be killed: once rows past a number
/// of lines were sent to the database (`HEALTHVAULT_STUDY_PAUSE_AFTER_LINES`), or with every
/// row moved and the commit next (`HEALTHVAULT_STUDY_PAUSE_BEFORE_COMMIT`). They say so on
/// stderr first. `HEALTHVAULT_STUDY_STAGED_LIMIT` makes a first bundle's staged rows go out in
/// smaller parcels than the default 4 MiB, so small test bundles take that path too.
enum StudyPause {
    static let afterLines = ProcessInfo.processInfo.environment["HEALTHVAULT_STUDY_PAUSE_AFTER_LINES"].flatMap { Int($0) }
    static let beforeCommit = ProcessInfo.processInfo.environment["HEALTHVAULT_STUDY_PAUSE_BEFORE_COMMIT"] != nil
    static let stagedLimit = ProcessInfo.processInfo.environment["HEALTHVAULT_STUDY_STAGED_LIMIT"].flatMap { Int($0) } ?? 4 << 20

    /// Waits to be killed once `lines` lines or more were sent, if asked to.
    static func afterSending(lines: Int) {
        if let afterLines, lines >= afterLines { wait("after \(lines) lines sent") }
    }

    static func wait(_ what: String) -> Never {
        FileHandle.standardError.write(Data("study load paused \(what)\n".utf8))
        while true { sleep(60) }
    }
}
