/// What can go wrong in the read models. Messages name no health values.
public enum ProjectionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// SQLite refused an operation (`code` is its result code; `message` is SQLite's own text).
    case sqlite(code: Int32, message: String)
    /// A serialized read model is not one this build can read.
    case unsupportedFormat(found: Int, supported: Int)
    /// A stored blob of intervals or stand hours is malformed.
    case corruptBlob(table: String)
    /// `sql` was given a statement that would change the read models.
    case notReadOnly
    /// An unknown metric name.
    case unknownMetric(String)

    public var description: String {
        switch self {
        case .sqlite(let code, let message): "SQLite error \(code): \(message)"
        case .unsupportedFormat(let found, let supported):
            "projection format \(found) is not supported by this build (it reads format \(supported)); run `vaultctl rebuild`"
        case .corruptBlob(let table): "projection table \(table) holds a malformed record; run `vaultctl rebuild`"
        case .notReadOnly: "only read-only statements (SELECT, EXPLAIN, read-only PRAGMA) are allowed; the projections are rebuilt from the log"
        case .unknownMetric(let name): "unknown metric \(name)"
        }
    }
}
