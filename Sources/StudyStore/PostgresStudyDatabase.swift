import Foundation
import ResearchBundle
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// A study in PostgreSQL, through PostgresNIO. A bundle's rows stream into a temporary staging
/// table with `COPY ... FROM STDIN` (text format), then one `INSERT ... SELECT ... ON CONFLICT`
/// per table moves them (COPY has no conflict handling). A participant's first bundle, whose raw
/// rows cannot conflict with anything, copies them straight into `samples` instead (the first
/// of each kind of line; copies go through staging to be numbered). The month partitions the
/// rows need are made first. Everything of a bundle in one transaction: a refused bundle or a
/// killed load leaves nothing (but empty partitions).
final class PostgresStudyDatabase: StudyDatabase {
    let target: StudyTarget
    private let connection: PostgresConnection
    /// Which raw lines a participant's first bundle has copied straight into `samples`.
    private let copied = LineBloomFilter()
    /// Whether this bundle's transaction made its staging table yet.
    private var stagingMade = false
    /// Months (`year * 12 + month - 1`) whose partitions exist, as far as this load knows.
    private var madeMonths = Set<Int32>()
    /// Those made in the current bundle's transaction (gone again if it rolls back).
    private var monthsMadeInTransaction = Set<Int32>()
    /// Months the current bundle's transaction asked for.
    private var monthsAskedInTransaction = Set<Int32>()
    /// Months a bundle asked for before the server rolled its transaction back to break a
    /// deadlock (two connections each making a month while holding rows): made in a
    /// transaction of their own before the bundle is tried again, so each try gets further.
    private var monthsBeforeRetry = Set<Int32>()
    /// Silent: PostgresNIO's logs could carry query text.
    private let logger = Logger(label: "healthvault.study", factory: { _ in SwiftLogNoOpLogHandler() })

    init(target: StudyTarget) async throws {
        guard case .postgres(let user, let password, let host, let port, let database, let tlsMode) = target else { throw StudyError.badTarget("\(target)") }
        self.target = target
        let tls: PostgresConnection.Configuration.TLS
        switch tlsMode {
        case .disable: tls = .disable
        case .prefer, .require:
            let context: NIOSSLContext
            do { context = try NIOSSLContext(configuration: .makeClientConfiguration()) } catch { throw Self.failure(target, error) }
            tls = tlsMode == .require ? .require(context) : .prefer(context)
        }
        let configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw Self.failure(target, error)
        }
    }

    static func failure(_ target: StudyTarget, _ error: Error) -> Error {
        // A bundle that failed its checks part-way is the bundle's refusal, not the database's.
        if error is BundleError { return error }
        if let error = error as? StudyError { return error }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return StudyError.database(target: "\(target)", reason: message) }
            return StudyError.database(target: "\(target)", reason: "\(error.code)")
        }
        return StudyError.database(target: "\(target)", reason: "\(error)")
    }

    private func run(_ sql: String) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    private func count(_ sql: String) async throws -> Int {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        for try await value in rows.decode(Int64.self) { return Int(value) }
        return 0
    }

    func prepare() async throws {
        do {
            // A bundle's staged rows stay in memory (the default 8 MB of temporary buffers would
            // send a year's bundle to disk and back); set before the session's first temp table.
            try await run("SET temp_buffers = '512MB'")
            // Concurrent loaders of one study: one at a time makes the tables.
            try await run("BEGIN")
            try await run("SELECT pg_advisory_xact_lock(4242001)")
            for sql in StudySchema.tables(.postgres) { try await run(sql) }
            let rows = try await connection.query("SELECT value FROM study_meta WHERE key = 'schema'", logger: logger)
            var found: Int?
            for try await value in rows.decode(String.self) { found = Int(value) }
            if let found {
                guard found <= StudySchema.version else {
                    try await run("ROLLBACK")
                    throw StudyError.newerSchema(target: "\(target)", found: found, supported: StudySchema.version)
                }
            } else {
                try await run("INSERT INTO study_meta (key, value) VALUES ('schema', '\(StudySchema.version)')")
            }
            try await run("COMMIT")
        } catch { throw Self.failure(target, error) }
    }

    func loadedLines(bundle hash: String) async throws -> Int? {
        do {
            let rows = try await connection.query("SELECT lines FROM bundles WHERE hash = \(hash)", logger: logger)
            for try await lines in rows.decode(Int64.self) { return Int(lines) }
            return nil
        } catch { throw Self.failure(target, error) }
    }

    func load(_ bundle: PendingBundle, rows: BundleRows) async throws -> LoadCounts {
        if !monthsBeforeRetry.isEmpty {
            // The months this bundle was rolled back for, made in a transaction that holds no
            // rows: it can be held up by other loads, and a deadlock with one that holds rows and
            // wants to make a month too is broken as before (busy, these months still to make);
            // but the bundle's own try then finds them made.
            let months = monthsBeforeRetry
            monthsBeforeRetry = []
            try await transaction(for: bundle) { try await ensurePartitions(months) }
        }
        return try await transaction(for: bundle) {
            let counts = try await loadInTransaction(bundle, rows: rows)
            if StudyPause.beforeCommit { StudyPause.wait("before commit") }
            return counts
        }
    }

    /// Runs `body` in one transaction for `bundle`, committed when it returns. When it fails,
    /// the transaction is rolled back with the partitions it made, and the error says whether
    /// the bundle is refused (`refusal`), worth another try (busy: the months it asked for are
    /// made first on that try), or the database failed.
    private func transaction<T>(for bundle: PendingBundle, _ body: () async throws -> T) async throws -> T {
        do {
            try await run("BEGIN")
            monthsMadeInTransaction = []
            monthsAskedInTransaction = []
            do {
                let result = try await body()
                try await run("COMMIT")
                return result
            } catch {
                _ = try? await run("ROLLBACK")
                madeMonths.subtract(monthsMadeInTransaction)
                let refusal = Self.refusal(of: bundle, error)
                if case StudyError.busy? = refusal { monthsBeforeRetry = monthsAskedInTransaction.subtracting(madeMonths) }
                throw refusal ?? error
            }
        } catch { throw Self.failure(target, error) }
    }

    /// What the server refused because of the bundle's content (SQLSTATE class 22, a value the
    /// column cannot take), or because another load took the same bundle meanwhile (23505 on
    /// `bundles`): the bundle is refused, the run goes on. A deadlock or serialization failure
    /// the server broke: the bundle is worth another try.
    static func refusal(of bundle: PendingBundle, _ error: Error) -> Error? {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return nil }
        if state.hasPrefix("22") {
            return BundleError.refused(path: bundle.path, reason: "holds a value the database refuses (\(error.serverInfo?[.message] ?? state))")
        }
        if state == "40P01" || state == "40001" {
            return StudyError.busy(path: bundle.path)
        }
        if state == "23505", error.serverInfo?[.constraintName] == "bundles_pkey" {
            return BundleError.refused(path: bundle.path, reason: "was loaded by another load at the same time")
        }
        return nil
    }

    /// Makes sure `months` (`year * 12 + month - 1`) have their partitions of `samples` and
    /// `aggregates`, made inside the bundle's transaction when missing, one loader at a time (the
    /// advisory lock is held to the commit). Two loaders that each need a new month while holding
    /// rows can deadlock; the server breaks it and the loader tries the bundle again.
    private func ensurePartitions<S: Sequence>(_ months: S) async throws where S.Element == Int32 {
        let wanted = Set(months).subtracting(madeMonths)
        guard !wanted.isEmpty else { return }
        monthsAskedInTransaction.formUnion(wanted)
        let names = wanted.sorted().map { Self.partition("samples", $0) }
        let missing = try await connection.query("SELECT n FROM unnest(\(names)::text[]) AS n WHERE to_regclass(n) IS NULL", logger: logger)
        var absent = Set<String>()
        for try await name in missing.decode(String.self) { absent.insert(name) }
        let toMake = wanted.filter { absent.contains(Self.partition("samples", $0)) }.sorted()
        if !toMake.isEmpty {
            try await run("SELECT pg_advisory_xact_lock(4242002)")
            for month in toMake {
                let first = Self.firstDay(month), next = Self.firstDay(month + 1)
                for table in ["samples", "aggregates"] {
                    try await run("CREATE TABLE IF NOT EXISTS \(Self.partition(table, month)) PARTITION OF \(table) FOR VALUES FROM ('\(first)') TO ('\(next)')")
                }
            }
            monthsMadeInTransaction.formUnion(toMake)
        }
        madeMonths.formUnion(wanted)
    }

    /// A participant's first bundle: its raw rows cannot conflict with anything, so the first
    /// line of each kind is copied straight into `samples` (occurrence 1); a line the filter may
    /// have seen, and every other row, is staged and moved after (staged rows are sent whenever
    /// `stagedLimit` bytes gather, so memory stays bounded). A row of a month without its
    /// partition pauses the copy while the partition is made. Returns the rows copied.
    private func copyFirstBundle(_ bundle: PendingBundle, feed: RowFeed) async throws -> Int {
        // The manifest's own count (signed, but any number): summed without overflow, bounded.
        let announced = feed.rows.manifest.files.reduce(0) { sum, file in
            file.granularity == "raw" && file.format == "ndjson" ? min(sum + min(max(file.lines, 0), 1 << 40), 1 << 40) : sum
        }
        copied.reset(expectedLines: announced)
        var direct = 0
        let suffix = Array("\t\(bundle.fingerprint)\t1\t\(bundle.hash)".utf8)
        var staged = ByteBuffer()
        var newMonth: Int32?
        repeat {
            if let month = newMonth {
                try await ensurePartitions([month])
                newMonth = nil
            }
            try await connection.copyFrom(table: "samples", columns: StudySchema.directSampleColumns, logger: logger) { writer in
                var out = ByteBuffer()
                while newMonth == nil, staged.readableBytes < StudyPause.stagedLimit, try feed.fill() {
                    let routed = Self.route(feed.batch, from: feed.index, months: madeMonths, copied: copied, suffix: suffix,
                                            direct: &out, staged: &staged)
                    feed.index = routed.next
                    direct += routed.copied
                    newMonth = routed.newMonth
                    if out.readableBytes >= 1 << 18 {
                        try await writer.write(out)
                        out.clear()
                        StudyPause.afterSending(lines: feed.position)
                    }
                }
                if out.readableBytes > 0 {
                    try await writer.write(out)
                    StudyPause.afterSending(lines: feed.position)
                }
            }
            if staged.readableBytes > 0 {
                try await makeStaging()
                try await connection.copyFrom(table: "study_staging", columns: StudySchema.stagingColumns, logger: logger) { writer in
                    try await writer.write(staged)
                }
                staged.clear()
                StudyPause.afterSending(lines: feed.position)
            }
        } while newMonth != nil || !feed.finished
        return direct
    }

    /// Sends rows of `batch` from `start` on: a raw row new to `copied`, in a month with its
    /// partition, to `direct`; every other row to `staged`. Stops at the end of the batch, once
    /// `staged` is full, or at a raw row whose month has no partition yet (returned).
    private static func route(_ batch: StudyRowBatch, from start: Int, months: Set<Int32>, copied: LineBloomFilter, suffix: [UInt8],
                              direct: inout ByteBuffer, staged: inout ByteBuffer) -> (next: Int, copied: Int, newMonth: Int32?) {
        batch.arena.withUnsafeBufferPointer { arena in
            var row = start, count = 0
            while row < batch.count, staged.readableBytes < StudyPause.stagedLimit {
                if batch.kinds[row] == .sample {
                    let month = batch.months[row]
                    guard months.contains(month) else { return (row, count, month) }
                    if !copied.insert(batch.hashes[row]) {
                        CopyText.append(row, CopyText.directFields, of: batch, arena: arena, suffix: suffix, to: &direct)
                        count += 1
                        row += 1
                        continue
                    }
                }
                CopyText.append(row, CopyText.stagingFields, of: batch, arena: arena, to: &staged)
                row += 1
            }
            return (row, count, nil)
        }
    }

    static func partition(_ table: String, _ month: Int32) -> String {
        "\(table)_\(month / 12)_\(String(format: "%02d", month % 12 + 1))"
    }

    static func firstDay(_ month: Int32) -> String {
        String(format: "%04d-%02d-01", month / 12, month % 12 + 1)
    }

    /// `year * 12 + month - 1` of `YYYY-MM…`.
    static func monthKey(_ text: String) -> Int32? {
        Array((text.prefix(7) + "-01").utf8).withUnsafeBufferPointer { StudyRowBatch.month(of: $0) }
    }

    private func loadInTransaction(_ bundle: PendingBundle, rows: BundleRows) async throws -> LoadCounts {
        let fp = StudySchema.literal(bundle.fingerprint)
        // One load of a participant at a time, so whether their raw rows are new is decided once.
        try await run("SELECT pg_advisory_xact_lock(4242003, hashtext(\(fp)))")
        let held = try await count("""
            SELECT (EXISTS (SELECT 1 FROM samples WHERE fingerprint = \(fp)) OR EXISTS (SELECT 1 FROM records WHERE fingerprint = \(fp)))::int
            """)
        let fresh = held == 0
        stagingMade = false
        var counts = LoadCounts()
        let feed = RowFeed(rows, readAhead: false)
        defer { feed.stop() }
        if fresh {
            counts.added += try await copyFirstBundle(bundle, feed: feed)
        } else {
            try await makeStaging()
            try await connection.copyFrom(table: "study_staging", columns: StudySchema.stagingColumns, logger: logger) { writer in
                var out = ByteBuffer()
                while try feed.fill() {
                    feed.batch.arena.withUnsafeBufferPointer { arena in
                        for row in feed.index..<feed.batch.count {
                            CopyText.append(row, CopyText.stagingFields, of: feed.batch, arena: arena, to: &out)
                        }
                    }
                    feed.index = feed.batch.count
                    try await writer.write(out)
                    out.clear()
                    StudyPause.afterSending(lines: feed.position)
                }
            }
        }
        // Partitions for the staged rows' months, made before the rows move (so the default
        // partition stays empty and a month can always be attached).
        if stagingMade {
            let monthRows = try await connection.query("SELECT DISTINCT to_char(day, 'YYYY-MM') FROM study_staging WHERE day IS NOT NULL", logger: logger)
            var stagedMonths: [Int32] = []
            for try await month in monthRows.decode(String.self) { if let key = Self.monthKey(month) { stagedMonths.append(key) } }
            try await ensurePartitions(stagedMonths)
            for sql in StudySchema.moves(.postgres, fingerprint: bundle.fingerprint, bundle: bundle.hash, madeAt: bundle.madeAt, fresh: fresh) {
                counts.added += try await count("WITH moved AS (\(sql) RETURNING 1) SELECT count(*) FROM moved")
            }
        }
        counts.duplicates = rows.lines - counts.added
        try await connection.query("""
            INSERT INTO participants (fingerprint, label, first_loaded) VALUES (\(bundle.fingerprint), \(bundle.label), now())
            ON CONFLICT (fingerprint) DO UPDATE SET label = COALESCE(excluded.label, participants.label)
            """, logger: logger)
        try await connection.query("""
            INSERT INTO bundles (hash, fingerprint, recipient, made_at, loaded_at, follows, consents, lines, added, duplicates, withdrawn)
            VALUES (\(bundle.hash), \(bundle.fingerprint), \(bundle.recipient), \(bundle.madeAt)::timestamptz, clock_timestamp(), \(bundle.follows),
                    \(bundle.consents)::jsonb, \(Int64(rows.lines)), \(Int64(counts.added)), \(Int64(counts.duplicates)), 0)
            """, logger: logger)
        counts.withdrawn = try await withdraw(bundle, rows: rows)
        if counts.withdrawn > 0 {
            try await connection.query("UPDATE bundles SET withdrawn = \(Int64(counts.withdrawn)) WHERE hash = \(bundle.hash)", logger: logger)
        }
        return counts
    }

    /// Makes the bundle's staging table the first time a row needs it: a participant's first
    /// bundle of raw rows usually stages none, and a temporary table made and dropped for every
    /// bundle is catalog rows written and deleted (and vacuumed) a thousand times a study.
    private func makeStaging() async throws {
        guard !stagingMade else { return }
        try await run(StudySchema.staging(.postgres))
        stagingMade = true
    }

    private func withdraw(_ bundle: PendingBundle, rows: BundleRows) async throws -> Int {
        let latest = try await connection.query("""
            SELECT hash, consents::text FROM bundles WHERE fingerprint = \(bundle.fingerprint) ORDER BY made_at DESC, loaded_at DESC LIMIT 2
            """, logger: logger)
        var newest: [(hash: String, consents: String)] = []
        for try await (hash, text) in latest.decode((String, String).self) { newest.append((hash, text)) }
        guard let consents = newest.first?.consents else { return 0 }
        if try Coverage.nothingToWithdraw(isLatest: newest[0].hash == bundle.hash, rowsOutside: rows.outsideConsents,
                                          latest: consents, previous: newest.count > 1 ? newest[1].consents : nil) {
            return 0
        }
        let coverage = try Coverage(consentsJSON: consents)
        try await run("CREATE TEMP TABLE study_coverage (category TEXT, granularity TEXT, from_day TEXT, to_day TEXT) ON COMMIT DROP")
        for s in coverage.spans {
            try await connection.query("INSERT INTO study_coverage VALUES (\(s.category), \(s.granularity), \(s.from), \(s.to))", logger: logger)
        }
        let fp = StudySchema.literal(bundle.fingerprint), hash = StudySchema.literal(bundle.hash)
        let tables = Coverage.tables(dayCast: "::date")
        var total = 0
        for t in tables {
            total += try await count("""
                WITH gone AS (DELETE FROM \(t.table) AS \(t.alias) WHERE \(t.alias).fingerprint = \(fp) AND NOT \(t.covered)
                              RETURNING \(t.alias).category, \(t.granularity) AS granularity),
                     noted AS (INSERT INTO withdrawals (fingerprint, bundle, category, granularity, rows, at)
                               SELECT \(fp), \(hash), category, granularity, count(*), now() FROM gone GROUP BY category, granularity)
                SELECT count(*) FROM gone
                """)
        }
        return total
    }

    func close() async {
        try? await connection.close()
    }
}
