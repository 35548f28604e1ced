import Foundation
import ResearchBundle
import SQLiteStore

/// The embedded study database: one SQLite file (nothing to install). Rows are staged with a
/// prepared statement in one `BEGIN IMMEDIATE` transaction per bundle, which SQLite's journal
/// makes all or nothing across a crash.
final class SQLiteStudyDatabase: StudyDatabase {
    let path: String
    private let db: SQLiteConnection

    init(path: String) throws {
        self.path = path
        do { db = try SQLiteConnection(creatingPlainFile: path) } catch { throw Self.failure(path, error) }
    }

    static func failure(_ path: String, _ error: Error) -> Error {
        // A bundle that failed its checks part-way is the bundle's refusal, not the database's.
        if error is BundleError { return error }
        if let error = error as? StudyError { return error }
        if let message = (error as? SQLiteError)?.message { return StudyError.database(target: "sqlite:\(path)", reason: message) }
        return StudyError.database(target: "sqlite:\(path)", reason: "\(error)")
    }

    func prepare() async throws {
        do {
            for sql in StudySchema.tables(.sqlite) { try db.execute(sql) }
            if let found = try db.scalarText("SELECT value FROM study_meta WHERE key = 'schema'").flatMap({ Int($0) }) {
                guard found <= StudySchema.version else {
                    throw StudyError.newerSchema(target: "sqlite:\(path)", found: found, supported: StudySchema.version)
                }
            } else {
                try db.execute("INSERT INTO study_meta (key, value) VALUES ('schema', '\(StudySchema.version)')")
            }
        } catch { throw Self.failure(path, error) }
    }

    func loadedLines(bundle hash: String) async throws -> Int? {
        do {
            let statement = try db.prepare("SELECT lines FROM bundles WHERE hash = ?")
            try statement.bind(1, hash)
            return try statement.step() ? Int(statement.int64(0)) : nil
        } catch { throw Self.failure(path, error) }
    }

    func load(_ bundle: PendingBundle, rows: BundleRows) async throws -> LoadCounts {
        do {
            return try db.transaction {
                try db.execute("DROP TABLE IF EXISTS temp.study_staging")
                try db.execute(StudySchema.staging(.sqlite))
                let columns = StudySchema.stagingColumns
                let insert = try db.prepare("INSERT INTO study_staging (\(columns.joined(separator: ","))) VALUES (\(columns.map { _ in "?" }.joined(separator: ",")))")
                let feed = RowFeed(rows, readAhead: true)
                defer { feed.stop() }
                while try feed.fill() {
                    for row in feed.index..<feed.batch.count { try stage(row, of: feed.batch, with: insert) }
                    feed.index = feed.batch.count
                    StudyPause.afterSending(lines: feed.position)
                }
                var counts = LoadCounts()
                for sql in StudySchema.moves(.sqlite, fingerprint: bundle.fingerprint, bundle: bundle.hash, madeAt: bundle.madeAt) {
                    try db.execute(sql)
                    counts.added += db.changes
                }
                counts.duplicates = rows.lines - counts.added
                let now = StudyClock.now()
                let participant = try db.prepare("""
                    INSERT INTO participants (fingerprint, label, first_loaded) VALUES (?, ?, ?)
                    ON CONFLICT (fingerprint) DO UPDATE SET label = COALESCE(excluded.label, participants.label)
                    """)
                try participant.bind(1, bundle.fingerprint)
                if let label = bundle.label { try participant.bind(2, label) } else { try participant.bindNull(2) }
                try participant.bind(3, now)
                try participant.run()
                let record = try db.prepare("""
                    INSERT INTO bundles (hash, fingerprint, recipient, made_at, loaded_at, follows, consents, lines, added, duplicates, withdrawn)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
                    """)
                for (i, text) in [bundle.hash, bundle.fingerprint, bundle.recipient, bundle.madeAt, now].enumerated() { try record.bind(Int32(i + 1), text) }
                if let follows = bundle.follows { try record.bind(6, follows) } else { try record.bindNull(6) }
                try record.bind(7, bundle.consents)
                try record.bind(8, Int64(rows.lines))
                try record.bind(9, Int64(counts.added))
                try record.bind(10, Int64(counts.duplicates))
                try record.run()
                counts.withdrawn = try withdraw(bundle, rows: rows, now: now)
                try db.execute("UPDATE bundles SET withdrawn = \(counts.withdrawn) WHERE hash = \(StudySchema.literal(bundle.hash))")
                try db.execute("DROP TABLE temp.study_staging")
                if StudyPause.beforeCommit { StudyPause.wait("before commit") }
                return counts
            }
        } catch { throw Self.failure(path, error) }
    }

    private func stage(_ row: Int, of batch: StudyRowBatch, with insert: SQLiteStatement) throws {
        insert.reset()
        for field in StudyRowBatch.Field.allCases {
            let column = Int32(field.rawValue + 1)
            switch field {
            case .value, .minimum, .maximum:
                let number = batch.numbers[row * 3 + (field == .value ? 0 : field == .minimum ? 1 : 2)]
                try insert.bind(column, number.isNaN ? nil : number)
            case .clipped:
                try insert.bind(column, Int64(batch.withField(row, field) { $0?.first == 0x74 } ? 1 : 0))
            default:
                // Integer columns take their decimal text as the integer (column affinity).
                try batch.withField(row, field) { bytes in
                    if let bytes { try insert.bind(column, utf8: bytes) } else { try insert.bindNull(column) }
                }
            }
        }
        try insert.run()
    }

    /// Deletes the participant's rows that their latest bundle's consents no longer cover, and
    /// records how many per category and granularity.
    private func withdraw(_ bundle: PendingBundle, rows: BundleRows, now: String) throws -> Int {
        let latest = try db.prepare("SELECT hash, consents FROM bundles WHERE fingerprint = ? ORDER BY made_at DESC, loaded_at DESC, rowid DESC LIMIT 2")
        try latest.bind(1, bundle.fingerprint)
        guard try latest.step(), let newestHash = latest.text(0), let consents = latest.text(1) else { return 0 }
        let previous = try latest.step() ? latest.text(1) : nil
        // No statement may be running when a table is dropped.
        latest.reset()
        if try Coverage.nothingToWithdraw(isLatest: newestHash == bundle.hash, rowsOutside: rows.outsideConsents, latest: consents, previous: previous) {
            return 0
        }
        let coverage = try Coverage(consentsJSON: consents)
        try db.execute("DROP TABLE IF EXISTS temp.study_coverage")
        try db.execute("CREATE TEMP TABLE study_coverage (category TEXT, granularity TEXT, from_day TEXT, to_day TEXT)")
        let span = try db.prepare("INSERT INTO study_coverage VALUES (?, ?, ?, ?)")
        for s in coverage.spans {
            span.reset()
            for (i, text) in [s.category, s.granularity, s.from, s.to].enumerated() { try span.bind(Int32(i + 1), text) }
            try span.run()
        }
        let fp = StudySchema.literal(bundle.fingerprint)
        let tables = Coverage.tables(dayCast: "")
        var total = 0
        for t in tables {
            let outside = "\(t.alias).fingerprint = \(fp) AND NOT \(t.covered)"
            try db.execute("""
                INSERT INTO withdrawals (fingerprint, bundle, category, granularity, rows, at)
                SELECT \(fp), \(StudySchema.literal(bundle.hash)), \(t.alias).category, \(t.granularity), count(*), \(StudySchema.literal(now))
                FROM \(t.table) AS \(t.alias) WHERE \(outside) GROUP BY \(t.alias).category, \(t.granularity)
                """)
            try db.execute("DELETE FROM \(t.table) AS \(t.alias) WHERE \(outside)")
            total += db.changes
        }
        try db.execute("DROP TABLE temp.study_coverage")
        return total
    }

    func close() async {}
}
