/// The study database's tables (docs/study-schema.md): one schema for SQLite and PostgreSQL,
/// PostgreSQL's `samples` and `aggregates` partitioned by month (declarative partitioning).
enum StudySchema {
    /// Written to `study_meta` as `schema`; a database of a later version is refused.
    static let version = 1

    /// The staging table's columns, in COPY order.
    static let stagingColumns = [
        "kind", "category", "granularity", "name", "day", "period", "start_at", "end_at", "utc_offset",
        "value", "value_text", "unit", "min_value", "max_value", "samples", "clipped", "fields", "line_hash", "ordinal",
    ]

    /// The `samples` columns a participant's first raw rows are copied into directly
    /// (PostgreSQL), in COPY order: `CopyText.directFields`, then fingerprint, occurrence, bundle.
    static let directSampleColumns = [
        "category", "type", "day", "start_at", "end_at", "utc_offset", "value", "value_text", "unit", "clipped", "fields", "line_hash",
        "fingerprint", "occurrence", "bundle",
    ]

    enum Dialect { case sqlite, postgres }

    /// The tables, created if missing.
    static func tables(_ dialect: Dialect) -> [String] {
        let pg = dialect == .postgres
        let time = pg ? "timestamptz" : "TEXT"
        let day = pg ? "date" : "TEXT"
        let json = pg ? "jsonb" : "TEXT"
        let real = pg ? "double precision" : "REAL"
        let bool = pg ? "boolean" : "INTEGER"
        let partitioned = pg ? " PARTITION BY RANGE (day)" : ""
        return [
            "CREATE TABLE IF NOT EXISTS study_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS participants (
                fingerprint TEXT PRIMARY KEY,
                label TEXT,
                first_loaded \(time) NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS bundles (
                hash TEXT PRIMARY KEY,
                fingerprint TEXT NOT NULL REFERENCES participants (fingerprint),
                recipient TEXT NOT NULL,
                made_at \(time) NOT NULL,
                loaded_at \(time) NOT NULL,
                follows TEXT,
                consents \(json) NOT NULL,
                lines BIGINT NOT NULL,
                added BIGINT NOT NULL,
                duplicates BIGINT NOT NULL,
                withdrawn BIGINT NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS samples (
                fingerprint TEXT NOT NULL,
                category TEXT NOT NULL,
                type TEXT NOT NULL,
                day \(day) NOT NULL,
                start_at \(time) NOT NULL,
                end_at \(time) NOT NULL,
                utc_offset INTEGER,
                value \(real),
                value_text TEXT,
                unit TEXT,
                clipped \(bool) NOT NULL,
                fields \(json),
                line_hash TEXT NOT NULL,
                occurrence INTEGER NOT NULL,
                bundle TEXT NOT NULL,
                PRIMARY KEY (fingerprint, day, line_hash, occurrence))\(partitioned)
            """,
            """
            CREATE TABLE IF NOT EXISTS records (
                fingerprint TEXT NOT NULL,
                category TEXT NOT NULL,
                type TEXT NOT NULL,
                value_text TEXT,
                fields \(json),
                line_hash TEXT NOT NULL,
                occurrence INTEGER NOT NULL,
                bundle TEXT NOT NULL,
                PRIMARY KEY (fingerprint, line_hash, occurrence))
            """,
            """
            CREATE TABLE IF NOT EXISTS aggregates (
                fingerprint TEXT NOT NULL,
                category TEXT NOT NULL,
                granularity TEXT NOT NULL,
                metric TEXT NOT NULL,
                period TEXT NOT NULL,
                day \(day) NOT NULL,
                value \(real),
                unit TEXT NOT NULL,
                min_value \(real),
                max_value \(real),
                samples INTEGER,
                made_at \(time) NOT NULL,
                bundle TEXT NOT NULL,
                PRIMARY KEY (fingerprint, day, granularity, period, metric, unit))\(partitioned)
            """,
            """
            CREATE TABLE IF NOT EXISTS withdrawals (
                fingerprint TEXT NOT NULL,
                bundle TEXT NOT NULL,
                category TEXT NOT NULL,
                granularity TEXT NOT NULL,
                rows BIGINT NOT NULL,
                at \(time) NOT NULL)
            """,
            // Anything a month partition does not take (PostgreSQL) lands here, never refused.
        ] + (pg ? [
            "CREATE TABLE IF NOT EXISTS samples_default PARTITION OF samples DEFAULT",
            "CREATE TABLE IF NOT EXISTS aggregates_default PARTITION OF aggregates DEFAULT",
        ] : [
            "CREATE INDEX IF NOT EXISTS samples_by_type ON samples (category, type, day)",
            "CREATE INDEX IF NOT EXISTS aggregates_by_metric ON aggregates (metric, day)",
        ])
    }

    /// The staging table one bundle's lines are copied into (dropped at commit in PostgreSQL).
    static func staging(_ dialect: Dialect) -> String {
        let pg = dialect == .postgres
        let real = pg ? "double precision" : "REAL"
        // PostgreSQL parses days, times and JSON while the rows stream in (COPY), not in the move.
        let day = pg ? "date" : "TEXT", time = pg ? "timestamptz" : "TEXT", json = pg ? "jsonb" : "TEXT"
        return """
            CREATE TEMP TABLE study_staging (
                kind TEXT NOT NULL, category TEXT NOT NULL, granularity TEXT NOT NULL, name TEXT NOT NULL,
                day \(day), period TEXT, start_at \(time), end_at \(time), utc_offset INTEGER,
                value \(real), value_text TEXT, unit TEXT, min_value \(real), max_value \(real), samples INTEGER,
                clipped BOOLEAN NOT NULL, fields \(json), line_hash TEXT NOT NULL, ordinal BIGINT NOT NULL)\(pg ? " ON COMMIT DROP" : "")
            """
    }

    /// Moves staged lines into the tables: new raw rows (an identical line's copies numbered in
    /// bundle order), undated records, and figures newer than the ones held. `$FP`, `$BUNDLE`
    /// and `$MADE` are bound by the caller (placeholders differ between the dialects).
    /// `fresh`: the participant had no raw rows before this bundle, so none can conflict and the
    /// plain insert (cheaper than ON CONFLICT's speculative one) is enough; the only raw rows
    /// already there are this bundle's, copied straight into `samples` as the first of their
    /// kind (occurrence 1), so a staged copy of one of them is numbered after it.
    static func moves(_ dialect: Dialect, fingerprint: String, bundle: String, madeAt: String, fresh: Bool = false) -> [String] {
        let pg = dialect == .postgres
        let fp = literal(fingerprint), b = literal(bundle), made = literal(madeAt)
        let timeCast = pg ? "::timestamptz" : ""
        let skipConflicts = fresh ? "" : "ON CONFLICT DO NOTHING"
        let clipped = pg ? "s.clipped" : "CASE WHEN s.clipped THEN 1 ELSE 0 END"
        let copiedBefore = "(SELECT count(*) FROM samples x WHERE x.fingerprint = \(fp) AND x.day = s.day AND x.line_hash = s.line_hash)"
        // SQLite needs a WHERE before ON CONFLICT in INSERT ... SELECT.
        return [
            """
            INSERT INTO samples (fingerprint, category, type, day, start_at, end_at, utc_offset, value, value_text, unit, clipped, fields,
                                 line_hash, occurrence, bundle)
            SELECT \(fp), s.category, s.name, s.day, s.start_at\(timeCast), s.end_at\(timeCast), s.utc_offset, s.value, s.value_text,
                   s.unit, \(clipped), s.fields, s.line_hash,
                   row_number() OVER (PARTITION BY s.day, s.line_hash ORDER BY s.ordinal)\(fresh ? " + " + copiedBefore : ""), \(b)
            FROM study_staging s WHERE s.kind = 's'
            \(skipConflicts)
            """,
            """
            INSERT INTO records (fingerprint, category, type, value_text, fields, line_hash, occurrence, bundle)
            SELECT \(fp), s.category, s.name, s.value_text, s.fields, s.line_hash,
                   row_number() OVER (PARTITION BY s.line_hash ORDER BY s.ordinal), \(b)
            FROM study_staging s WHERE s.kind = 'u'
            \(skipConflicts)
            """,
            // A figure is replaced only by one from a bundle made later, and only when it changed.
            """
            INSERT INTO aggregates (fingerprint, category, granularity, metric, period, day, value, unit, min_value, max_value, samples,
                                    made_at, bundle)
            SELECT \(fp), s.category, s.granularity, s.name, s.period, s.day, s.value, s.unit, s.min_value, s.max_value, s.samples,
                   \(made)\(timeCast), \(b)
            FROM study_staging s WHERE s.kind = 'a'
            ON CONFLICT (fingerprint, day, granularity, period, metric, unit) DO UPDATE SET
                value = excluded.value, min_value = excluded.min_value, max_value = excluded.max_value, samples = excluded.samples,
                made_at = excluded.made_at, bundle = excluded.bundle
            WHERE aggregates.made_at < excluded.made_at
              AND (aggregates.value IS DISTINCT FROM excluded.value OR aggregates.samples IS DISTINCT FROM excluded.samples
                   OR aggregates.min_value IS DISTINCT FROM excluded.min_value OR aggregates.max_value IS DISTINCT FROM excluded.max_value)
            """,
        ].map { pg ? $0 : $0.replacingOccurrences(of: "FROM study_staging s WHERE", with: "FROM study_staging s WHERE true AND")
                    .replacingOccurrences(of: "IS DISTINCT FROM", with: "IS NOT") }
    }

    /// An SQL string literal (quotes doubled). Used for values the loader itself made (hex
    /// hashes, fingerprints, ISO times), never for a bundle's free text.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
