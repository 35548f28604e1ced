import Foundation
import ResearchBundle
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// A study in PostgreSQL, through PostgresNIO. A bundle's rows stream into a temporary staging
/// table with `COPY ... FROM STDIN` (text format), then one `INSERT ... SELECT ... ON CONFLICT`
/// per table moves them (COPY has no conflict handling); the month partitions the rows need are
/// made first. Everything in one transaction: a refused bundle or a killed load leaves nothing.
final class PostgresStudyDatabase: StudyDatabase {
    let target: StudyTarget
    private let connection: PostgresConnection
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
        do {
            try await run("BEGIN")
            do {
                let counts = try await loadInTransaction(bundle, rows: rows)
                if StudyPause.beforeCommit { StudyPause.wait("before commit") }
                try await run("COMMIT")
                return counts
            } catch {
                _ = try? await run("ROLLBACK")
                throw Self.refusal(of: bundle, error) ?? error
            }
        } catch { throw Self.failure(target, error) }
    }

    /// What the server refused because of the bundle's content (SQLSTATE class 22, a value the
    /// column cannot take), or because another load took the same bundle meanwhile (23505 on
    /// `bundles`): the bundle is refused, the run goes on.
    static func refusal(of bundle: PendingBundle, _ error: Error) -> BundleError? {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return nil }
        if state.hasPrefix("22") {
            return .refused(path: bundle.path, reason: "holds a value the database refuses (\(error.serverInfo?[.message] ?? state))")
        }
        if state == "23505", error.serverInfo?[.constraintName] == "bundles_pkey" {
            return .refused(path: bundle.path, reason: "was loaded by another load at the same time")
        }
        return nil
    }

    private func loadInTransaction(_ bundle: PendingBundle, rows: BundleRows) async throws -> LoadCounts {
        try await run(StudySchema.staging(.postgres))
        try await connection.copyFrom(table: "study_staging", columns: StudySchema.stagingColumns, logger: logger) { writer in
            var buffer = ByteBuffer()
            while let batch = try rows.nextBatch() {
                buffer.clear()
                for row in batch { Self.appendCopyLine(row, to: &buffer) }
                try await writer.write(buffer)
            }
        }
        // Month partitions for the rows' days (made before the rows arrive, so the default
        // partition stays empty and a month can always be attached).
        let monthRows = try await connection.query("SELECT DISTINCT to_char(day, 'YYYY-MM') FROM study_staging WHERE day IS NOT NULL", logger: logger)
        // Loaders running side by side make partitions one at a time (held to the commit).
        try await run("SELECT pg_advisory_xact_lock(4242002)")
        var months: [String] = []
        for try await month in monthRows.decode(String.self) { months.append(month) }
        for month in months.sorted() {
            guard let (year, number) = Self.month(month) else { continue }
            let next = number == 12 ? String(format: "%04d-01", year + 1) : String(format: "%04d-%02d", year, number + 1)
            for table in ["samples", "aggregates"] {
                try await run("""
                    CREATE TABLE IF NOT EXISTS \(table)_\(year)_\(String(format: "%02d", number)) PARTITION OF \(table)
                    FOR VALUES FROM ('\(month)-01') TO ('\(next)-01')
                    """)
            }
        }
        var counts = LoadCounts()
        let held = try await count("""
            SELECT (EXISTS (SELECT 1 FROM samples WHERE fingerprint = \(StudySchema.literal(bundle.fingerprint)))
                 OR EXISTS (SELECT 1 FROM records WHERE fingerprint = \(StudySchema.literal(bundle.fingerprint))))::int
            """)
        for sql in StudySchema.moves(.postgres, fingerprint: bundle.fingerprint, bundle: bundle.hash, madeAt: bundle.madeAt, fresh: held == 0) {
            counts.added += try await count("WITH moved AS (\(sql) RETURNING 1) SELECT count(*) FROM moved")
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
        counts.withdrawn = try await withdraw(bundle)
        try await connection.query("UPDATE bundles SET withdrawn = \(Int64(counts.withdrawn)) WHERE hash = \(bundle.hash)", logger: logger)
        return counts
    }

    private func withdraw(_ bundle: PendingBundle) async throws -> Int {
        let latest = try await connection.query("""
            SELECT consents::text FROM bundles WHERE fingerprint = \(bundle.fingerprint) ORDER BY made_at DESC, loaded_at DESC LIMIT 1
            """, logger: logger)
        var consents: String?
        for try await text in latest.decode(String.self) { consents = text }
        guard let consents else { return 0 }
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

    static func month(_ text: String) -> (Int, Int)? {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let year = Int(parts[0]), let month = Int(parts[1]), (1...9999).contains(year), (1...12).contains(month) else { return nil }
        return (year, month)
    }

    /// One row as a line of COPY's text format: tab-separated, `\N` for null, backslash escapes.
    static func appendCopyLine(_ row: StudyRow, to buffer: inout ByteBuffer) {
        func field(_ text: String?, last: Bool = false) {
            if let text {
                for byte in text.utf8 {
                    switch byte {
                    case 0x5C: buffer.writeStaticString("\\\\")
                    case 0x09: buffer.writeStaticString("\\t")
                    case 0x0A: buffer.writeStaticString("\\n")
                    case 0x0D: buffer.writeStaticString("\\r")
                    default: buffer.writeInteger(byte)
                    }
                }
            } else {
                buffer.writeStaticString("\\N")
            }
            buffer.writeInteger(last ? UInt8(0x0A) : UInt8(0x09))
        }
        field(row.kind.rawValue)
        field(row.category)
        field(row.granularity)
        field(row.name)
        field(row.day)
        field(row.period)
        field(row.start)
        field(row.end)
        field(row.utcOffsetMinutes.map(String.init))
        field(row.valueLiteral)
        field(row.valueText)
        field(row.unit)
        field(row.minimumLiteral)
        field(row.maximumLiteral)
        field(row.samples.map(String.init))
        field(row.clipped ? "t" : "f")
        field(row.fields)
        field(row.lineHash)
        field(String(row.ordinal), last: true)
    }

    func close() async {
        try? await connection.close()
    }
}
