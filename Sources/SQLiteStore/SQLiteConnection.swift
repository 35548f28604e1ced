import CSQLite

/// One SQLite database handle, closed in `deinit`. Not thread-safe.
///
/// Either in memory, or a file opened through a page-encrypting VFS (`PageCipherVFS`), which the
/// connection keeps registered while it is open. Temporary tables and sorts stay in memory.
package final class SQLiteConnection {
    package let handle: OpaquePointer
    /// The VFS the file is opened through; released after the handle is closed.
    private let vfs: PageCipherVFS?

    /// Opens the existing plain database file at `path` through the default VFS (the explicit
    /// plaintext copy's target).
    package init(plainFile path: String) throws {
        handle = try Self.open(path, flags: SQLITE_OPEN_READWRITE, vfs: nil)
        vfs = nil
    }

    /// SQLite's page cache of a connection to an encrypted file, in KiB.
    package static let cacheKiB = 16384

    /// Opens (creating it if missing) the database file at `path` through `vfs`.
    package init(path: String, vfs: PageCipherVFS) throws {
        handle = try Self.open(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE, vfs: vfs)
        self.vfs = vfs
        sqlite3_extended_result_codes(handle, 1)
        // Another process catching the same file up holds the write lock for a moment.
        sqlite3_busy_timeout(handle, 10_000)
        try execute("PRAGMA temp_store = MEMORY")
        try execute("PRAGMA secure_delete = ON")
        try execute("PRAGMA cache_size = -\(Self.cacheKiB)")
    }

    /// Opens (creating it if missing) the database file at `path` through the VFS `other` uses.
    package convenience init(path: String, throughVFSOf other: SQLiteConnection) throws {
        guard let vfs = other.vfs else { throw SQLiteError(code: SQLITE_MISUSE, message: "no page cipher to share") }
        try self.init(path: path, vfs: vfs)
    }

    /// Opens, creating it if missing, the plain (unencrypted) database file at `path`: a
    /// researcher's study database, which is theirs to protect like their PostgreSQL.
    package init(creatingPlainFile path: String) throws {
        handle = try Self.open(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE, vfs: nil)
        vfs = nil
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 10_000)
        try execute("PRAGMA temp_store = MEMORY")
    }

    /// A new, empty in-memory database.
    package init() throws {
        // ":memory:" alone, not SQLITE_OPEN_MEMORY: that flag would make VACUUM INTO's target
        // (the explicit plaintext copy) an in-memory database as well.
        handle = try Self.open(":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs: nil)
        vfs = nil
        try execute("PRAGMA temp_store = MEMORY")
        try execute("PRAGMA journal_mode = MEMORY")
    }

    /// `sqlite3_open_v2` (never sharing a mutex: a connection is used by one thread at a time);
    /// a page of `vfs` that failed authentication makes the error `SQLITE_IOERR_DATA`.
    private static func open(_ path: String, flags: Int32, vfs: PageCipherVFS?) throws -> OpaquePointer {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, vfs?.name)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: vfs?.metDamage == true ? SQLITE_IOERR | (32 << 8) : rc, message: message)
        }
        return db
    }

    deinit {
        sqlite3_close_v2(handle)
        withExtendedLifetime(vfs) {}
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// The rowid of the last row inserted.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// Rows the last statement inserted, updated or deleted.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    package func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The first column of the first row, as text.
    package func scalarText(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    package func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW else {
            // The extended code tells a page that failed authentication (SQLITE_IOERR_DATA) from
            // other I/O errors.
            let extended = sqlite3_extended_errcode(handle)
            var code = extended & 0xFF == rc & 0xFF ? extended : rc
            // SQLite may pass a page's SQLITE_IOERR_DATA on as a plain SQLITE_IOERR.
            if code & 0xFF == SQLITE_IOERR, vfs?.metDamage == true { code = SQLITE_IOERR | (32 << 8) }
            throw SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
        }
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}
