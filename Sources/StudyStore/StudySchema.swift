/// The study database's tables (docs/study-schema.md): one schema for SQLite and PostgreSQL,
/// PostgreSQL's sample and aggregate tables partitioned by month.
enum StudySchema {
    /// Written to `study_meta` as `schema`; a database of a later version is refused.
    static let version = 1
}
