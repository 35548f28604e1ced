import CSQLite

/// A prepared statement, finalized in `deinit`. Binding indexes start at 1, columns at 0.
package final class SQLiteStatement {
    package let handle: OpaquePointer
    unowned let connection: SQLiteConnection

    /// Prepares the first statement of `sql`; `hasTail` says whether anything but whitespace and
    /// comments followed it.
    package init(connection: SQLiteConnection, sql: String) throws {
        var statement: OpaquePointer?
        var tail = false
        let rc = sql.withCString { text -> Int32 in
            var rest: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v2(connection.handle, text, -1, &statement, &rest)
            if let rest, rest.pointee != 0 {
                // The rest may be only blanks or comments: preparing it gives no statement then.
                var next: OpaquePointer?
                if sqlite3_prepare_v2(connection.handle, rest, -1, &next, nil) != SQLITE_OK || next != nil { tail = true }
                sqlite3_finalize(next)
            }
            return rc
        }
        guard rc == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            let message = rc == SQLITE_OK ? "no SQL statement given" : String(cString: sqlite3_errmsg(connection.handle))
            throw SQLiteError(code: rc, message: message)
        }
        self.handle = statement
        self.connection = connection
        self.hasTail = tail
    }

    /// Whether more statements followed the one prepared.
    package let hasTail: Bool

    deinit {
        sqlite3_finalize(handle)
    }

    /// Whether the statement leaves the database unchanged.
    package var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    package var columnCount: Int { Int(sqlite3_column_count(handle)) }

    package func columnName(_ i: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(i))) }

    /// Clears bindings and rewinds, ready for the next use.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    package func bind(_ i: Int32, _ value: Int64) throws { try connection.check(sqlite3_bind_int64(handle, i, value)) }
    package func bind(_ i: Int32, _ value: Double) throws { try connection.check(sqlite3_bind_double(handle, i, value)) }
    package func bindNull(_ i: Int32) throws { try connection.check(sqlite3_bind_null(handle, i)) }
    package func bind(_ i: Int32, _ value: Double?) throws {
        if let value { try bind(i, value) } else { try bindNull(i) }
    }
    /// Binds text by its UTF-8 length, so that a string holding NUL is kept whole (a length of
    /// -1 made SQLite stop at the first NUL: two sources that differ after one collided).
    package func bind(_ i: Int32, _ value: String) throws {
        var text = value
        try text.withUTF8 { try bind(i, utf8: $0) }
    }
    /// Binds UTF-8 text given as bytes (copied by SQLite).
    package func bind(_ i: Int32, utf8 text: UnsafeBufferPointer<UInt8>) throws {
        let rc = text.withMemoryRebound(to: CChar.self) {
            sqlite3_bind_text(handle, i, $0.baseAddress ?? UnsafePointer(bitPattern: 1), Int32($0.count), SQLITE_TRANSIENT)
        }
        try connection.check(rc)
    }
    package func bind(_ i: Int32, _ value: [UInt8]) throws {
        let rc = value.withUnsafeBytes { sqlite3_bind_blob(handle, i, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), SQLITE_TRANSIENT) }
        try connection.check(rc)
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    package func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        try connection.check(rc)
        return false
    }

    /// Runs to completion, then resets.
    package func run() throws {
        defer { reset() }
        while try step() {}
    }

    package func isNull(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_NULL }
    package func int64(_ i: Int) -> Int64 { sqlite3_column_int64(handle, Int32(i)) }
    package func double(_ i: Int) -> Double { sqlite3_column_double(handle, Int32(i)) }
    package func optionalDouble(_ i: Int) -> Double? { isNull(i) ? nil : double(i) }
    /// The column's text, whole (NUL included), by its byte count.
    package func text(_ i: Int) -> String? {
        guard let p = sqlite3_column_text(handle, Int32(i)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(i)))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }
    package func blob(_ i: Int) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, Int32(i)))
        guard count > 0, let p = sqlite3_column_blob(handle, Int32(i)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: count))
    }

    /// The column's value as SQLite typed it: Int64, Double, String, [UInt8] or nil.
    package func value(_ i: Int) -> SQLValue {
        switch sqlite3_column_type(handle, Int32(i)) {
        case SQLITE_INTEGER: .integer(int64(i))
        case SQLITE_FLOAT: .real(double(i))
        case SQLITE_TEXT: .text(text(i) ?? "")
        case SQLITE_BLOB: .blob(blob(i))
        default: .null
        }
    }
}

/// SQLITE_TRANSIENT: SQLite copies bound text and blobs.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

@available(*, unavailable)
extension SQLiteStatement: Sendable {}

/// A value read by `vaultctl sql`.
public enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}
