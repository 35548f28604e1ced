import CSQLite
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif
/// The SQLite read models of one vault: daily totals deduplicated across sources, rings with
/// their goals, streaks, sources and their order.
///
/// They live in a database file encrypted page by page (`init(path:key:)`), or in memory for
/// tests. Every update runs in one transaction that also stores the log position it reached
/// (opaque bytes the vault gives), so the file always holds exactly the events up to its position;
/// a query reads the pages it needs and an update writes the pages it changes.
public final class ReadModels {
    let db: SQLiteConnection

    /// Empty read models in memory (the state before the first event).
    public init() throws {
        db = try SQLiteConnection()
        try createSchema()
    }

    /// The read models in the encrypted database file at `path`, created empty when missing.
    /// Throws `unsupportedFormat` for a file of another format and `ProjectionError.sqlite` for
    /// one that does not open under `key` or is damaged (the caller removes it and rebuilds).
    public init(path: String, key: SecretKey) throws {
        db = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
        // One page per cipher block (only a new file takes it).
        try db.execute("PRAGMA page_size = \(PageCipherVFS.blockSize)")
        try db.transaction {
            // Under the write lock: two processes opening a new file create the schema once.
            let tables = try db.prepare("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'projection_meta'")
            if try tables.step(), tables.int64(0) == 0 { try createTables() }
        }
        let found = try db.prepare("SELECT value FROM projection_meta WHERE key = 'format'")
        let format = try found.step() ? Int(found.int64(0)) : 0
        guard format == ProjectionSchema.format else {
            throw ProjectionError.unsupportedFormat(found: format, supported: ProjectionSchema.format)
        }
    }

    /// An existing plain SQLite file of read models (a `writePlaintextCopy`), for tests to read.
    init(plainCopyAt path: String) throws {
        db = try SQLiteConnection(plainFile: path)
    }

    /// Overwrites the database file at `path` and its journal with zeros, then removes them.
    public static func removeFiles(at path: String) throws {
        for file in [path + "-journal", path] {
            let code = PageCipherVFS.wipe(file)
            guard code == 0 else { throw ProjectionError.cannotRemove(path: file, errno: code) }
            if unlink(file) != 0 && errno != ENOENT { throw ProjectionError.cannotRemove(path: file, errno: errno) }
        }
    }

    private func createSchema() throws {
        try db.transaction { try createTables() }
    }

    private func createTables() throws {
        try db.execute(ProjectionSchema.statements)
        try setMeta("format", Int64(ProjectionSchema.format))
    }

    /// The rewritten copies (identical samples but for their creation date, counted once) the
    /// last `update` added; 0 when it changed nothing, and after a `rebuild`.
    public private(set) var rewritesInLastUpdate = 0

    /// SQLite's page cache of the read models' connection, in KiB.
    public static var cacheKiB: Int { SQLiteConnection.cacheKiB }

    /// The log position the models reflect, as given to the last update; nil before any.
    public var position: [UInt8]? {
        get throws {
            let statement = try db.prepare("SELECT value FROM projection_meta WHERE key = 'position'")
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    /// Applies what `feed` adds, then records the position `feed` returns, in one transaction
    /// that holds the write lock from the start (`position` read inside `feed` cannot move under
    /// it): if `feed` throws, nothing of it is kept; if it returns nil, nothing changes.
    ///
    /// - Parameter cacheKiB: SQLite's page cache for this update, when it is to be smaller than
    ///   the connection's (`cacheKiB`): an import that also holds its identities' runs in memory.
    public func update(cacheKiB: Int? = nil, _ feed: (inout ProjectionUpdate) throws -> [UInt8]?) throws {
        rewritesInLastUpdate = 0
        if let cacheKiB {
            try db.execute("PRAGMA cache_size = -\(cacheKiB)")
        }
        defer { if cacheKiB != nil { try? db.execute("PRAGMA cache_size = -\(SQLiteConnection.cacheKiB)") } }
        try db.transaction {
            var update = try ProjectionUpdate(db: db)
            guard let position = try feed(&update) else { return }
            try update.finish()
            rewritesInLastUpdate = update.rewrittenCopiesAdded
            let statement = try db.prepare("INSERT OR REPLACE INTO projection_meta(key, value) VALUES ('position', ?)")
            try statement.bind(1, position)
            try statement.run()
        }
    }

    /// Empties every table, then applies what `feed` adds and records its position, in one
    /// transaction (deleted rows are overwritten: `secure_delete` is on).
    public func rebuild(_ feed: (inout ProjectionUpdate) throws -> [UInt8]) throws {
        rewritesInLastUpdate = 0
        try db.transaction {
            let tables = try db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            var names: [String] = []
            while try tables.step() { names.append(tables.text(0) ?? "") }
            for name in names { try db.execute("DELETE FROM \"\(name)\"") }
            try setMeta("format", Int64(ProjectionSchema.format))
            var update = try ProjectionUpdate(db: db)
            let position = try feed(&update)
            try update.finish()
            let statement = try db.prepare("INSERT OR REPLACE INTO projection_meta(key, value) VALUES ('position', ?)")
            try statement.bind(1, position)
            try statement.run()
        }
    }

    /// Reads every page of the file, so that each one is authenticated, the free ones too: SQLite's
    /// backup API copies every page into memory (`PRAGMA quick_check` reads only the pages in use:
    /// an old block put over a free page went unnamed), then `quick_check` checks the structure.
    /// Throws the damage a page that fails (one of another file or time put in, a flipped bit)
    /// causes, or a description of what SQLite's check found wrong. The copy is let go before the
    /// structure is checked (`inMemoryCopy` makes one to keep).
    public func checkEveryPage() throws {
        _ = try inMemoryCopy()
        let check = try db.prepare("PRAGMA quick_check")
        var findings: [String] = []
        while try check.step() { findings.append(check.text(0) ?? "") }
        guard findings == ["ok"] else { throw SQLiteError(code: 11, message: findings.prefix(3).joined(separator: "; ")) }
    }

    /// A copy of these read models in memory (SQLite's backup API), to catch up and compare
    /// without writing the file.
    public func inMemoryCopy() throws -> ReadModels {
        let copy = try ReadModels(emptyConnection: SQLiteConnection())
        try copyPages(into: copy.db, what: "the copy in memory")
        return copy
    }

    private init(emptyConnection: SQLiteConnection) {
        db = emptyConnection
    }

    /// Suffix of the new file `moveToFreshFile` writes before renaming it over the database.
    public static let freshFileSuffix = ".fresh"

    /// Copies the read models, page by page (SQLite's backup API, through the same page cipher),
    /// into a new file beside `path`, the database this object has open, then renames it over
    /// `path` and syncs the directory. A new file has a new random salt, so a new file key: no
    /// block of the file before (an erased month's, say, or the block holding the stored log
    /// position) authenticates in the file after. This object then reads the replaced file: open
    /// the read models again.
    public func moveToFreshFile(replacing path: String) throws {
        let fresh = path + Self.freshFileSuffix
        try Self.removeFiles(at: fresh)
        try copyPages(into: try SQLiteConnection(path: fresh, throughVFSOf: db), what: "the copy under a fresh file key")
        guard rename(fresh, path) == 0 else { throw ProjectionError.cannotCreate(path: path, errno: errno) }
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ProjectionError.cannotCreate(path: directory, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ProjectionError.cannotCreate(path: directory, errno: errno) }
    }

    /// Writes an unencrypted SQLite copy of the read models to `path` (which must not exist).
    public func writePlaintextCopy(to path: String) throws {
        // Created empty first so that the copy is readable by its owner only (0600), and never
        // replaces an existing file (VACUUM INTO accepts an existing empty file).
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ProjectionError.cannotCreate(path: path, errno: errno) }
        close(fd)
        // Through the default VFS, page by page with SQLite's backup API: the copy is plain SQLite.
        try copyPages(into: try SQLiteConnection(plainFile: path), what: "the plaintext copy")
    }

    /// Copies every page of the read models into `target` with SQLite's backup API; `what` names
    /// the copy in an error.
    private func copyPages(into target: SQLiteConnection, what: String) throws {
        guard let backup = sqlite3_backup_init(target.handle, "main", db.handle, "main") else {
            throw SQLiteError(code: sqlite3_errcode(target.handle), message: String(cString: sqlite3_errmsg(target.handle)))
        }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw SQLiteError(code: stepped, message: "\(what) failed") }
        try target.check(finished)
    }

    private func setMeta(_ key: String, _ value: Int64) throws {
        let statement = try db.prepare("INSERT OR REPLACE INTO projection_meta(key, value) VALUES (?, ?)")
        try statement.bind(1, key)
        try statement.bind(2, value)
        try statement.run()
    }
}

@available(*, unavailable)
extension ReadModels: Sendable {}
