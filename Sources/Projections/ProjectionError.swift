import SQLiteStore
#if canImport(Glibc)
import Glibc
#endif

/// What can go wrong in the read models. Messages name no health values.
public enum ProjectionError: StoredDataError, Equatable, Sendable, CustomStringConvertible {
    /// A serialized read model is not one this build can read.
    case unsupportedFormat(found: Int, supported: Int)
    /// A stored blob of intervals or stand hours is malformed.
    case corruptBlob(table: String)
    /// `sql` was given a statement that would change the read models.
    case notReadOnly
    /// `sql` was given more than one statement.
    case multipleStatements
    /// The plaintext copy's file could not be created (`errno` from open(2)).
    case cannotCreate(path: String, errno: Int32)
    /// A read-model file could not be wiped or removed (`errno`).
    case cannotRemove(path: String, errno: Int32)

    /// Whether the error says the stored read models are damaged or unusable (a page that fails
    /// authentication, a malformed database or record, another format): they are rebuilt.
    public var isDamage: Bool {
        switch self {
        case .unsupportedFormat, .corruptBlob: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .unsupportedFormat(let found, let supported):
            "projection format \(found) is not supported by this build (it reads format \(supported)); run `vaultctl rebuild`"
        case .corruptBlob(let table): "projection table \(table) holds a malformed record; run `vaultctl rebuild`"
        case .notReadOnly: "only read-only statements (SELECT, EXPLAIN, read-only PRAGMA) are allowed; the projections are rebuilt from the log"
        case .multipleStatements: "give one SQL statement at a time"
        case .cannotCreate(let path, let code): "cannot create \(path): \(String(cString: strerror(code)))"
        case .cannotRemove(let path, let code): "cannot remove \(path): \(String(cString: strerror(code)))"
        }
    }
}
