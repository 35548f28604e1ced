import SQLiteStore

/// Reads an embedded study database: the rows of one query, as text (the demo's, a script's).
public enum StudyQuery {
    /// The rows `sql` gives on the SQLite study at `path`, each column as text ("" for null).
    public static func rows(sqlite path: String, _ sql: String) throws -> [[String]] {
        do {
            let db = try SQLiteConnection(creatingPlainFile: path)
            let statement = try db.prepare(sql)
            var rows: [[String]] = []
            while try statement.step() {
                rows.append((0..<statement.columnCount).map { statement.text($0) ?? "" })
            }
            return rows
        } catch {
            throw SQLiteStudyDatabase.failure(path, error)
        }
    }
}
