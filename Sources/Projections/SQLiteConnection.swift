import CSQLite

/// One SQLite database handle, closed in `deinit`. Not thread-safe.
///
/// Read models live in an in-memory database: nothing is written to disk but the sealed image the
/// vault makes of `serialized()`. Temporary tables and sorts stay in memory too.
final class SQLiteConnection {
    let handle: OpaquePointer

    /// A new, empty in-memory database.
    init() throws {
        var db: OpaquePointer?
        // ":memory:" alone, not SQLITE_OPEN_MEMORY: that flag would make VACUUM INTO's target
        // (the explicit plaintext copy) an in-memory database as well.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(":memory:", &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw ProjectionError.sqlite(code: rc, message: message)
        }
        handle = db
        try execute("PRAGMA temp_store = MEMORY")
        try execute("PRAGMA journal_mode = MEMORY")
    }

    /// An in-memory database holding a copy of `image` (a `serialized()` result).
    convenience init(deserializing image: UnsafeRawBufferPointer) throws {
        try self.init()
        guard let copy = sqlite3_malloc64(sqlite3_uint64(max(image.count, 1))) else {
            throw ProjectionError.sqlite(code: SQLITE_NOMEM, message: "out of memory")
        }
        if let base = image.baseAddress { copy.copyMemory(from: base, byteCount: image.count) }
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        let rc = sqlite3_deserialize(handle, "main", copy.assumingMemoryBound(to: UInt8.self),
                                     sqlite3_int64(image.count), sqlite3_int64(image.count), flags)
        try check(rc)
        // A damaged image is refused now, not at the first query.
        let verdict = try scalarText("PRAGMA quick_check")
        guard verdict == "ok" else { throw ProjectionError.sqlite(code: SQLITE_CORRUPT, message: "database image fails quick_check") }
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil))
    }

    /// The rowid of the last row inserted.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
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
    func scalarText(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Calls `body` with the database's bytes (its file image), then zeroes and frees the copy.
    func withSerializedImage<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        var size: sqlite3_int64 = 0
        guard let bytes = sqlite3_serialize(handle, "main", &size, 0) else {
            throw ProjectionError.sqlite(code: SQLITE_NOMEM, message: "could not serialize the read models")
        }
        defer {
            // The image holds health data: wiped before it is released.
            let raw = UnsafeMutableRawPointer(bytes)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: Int(size))
            sqlite3_free(bytes)
        }
        return try body(UnsafeRawBufferPointer(start: bytes, count: Int(size)))
    }

    func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW else {
            throw ProjectionError.sqlite(code: rc, message: String(cString: sqlite3_errmsg(handle)))
        }
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}
