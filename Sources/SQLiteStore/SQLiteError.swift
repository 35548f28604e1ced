/// An error that says whether stored data is damaged or unusable: the read models are then
/// rebuilt from the log rather than the command failing.
public protocol StoredDataError: Error {
    var isDamage: Bool { get }
}

/// SQLite refused an operation: its result code and its own message (never a value).
public struct SQLiteError: StoredDataError, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// A page that failed authentication (`SQLITE_IOERR_DATA` from the page cipher), a malformed
    /// database (`SQLITE_CORRUPT`) or not a database (`SQLITE_NOTADB`).
    public var isDamage: Bool {
        let primary = code & 0xFF
        return code == 10 | (32 << 8) || primary == 11 || primary == 26
    }

    public var description: String { "SQLite error \(code): \(message)" }
}
