#if canImport(Glibc)
import Glibc
#endif
/// The SQLite read models of one vault: daily totals deduplicated across sources, rings with
/// their goals, streaks, sources and their order.
///
/// They live in an in-memory database. `withImage` hands out its bytes for the vault to seal;
/// `init(image:)` takes them back. Every update runs in one transaction that also stores the log
/// position it reached (opaque bytes the vault gives), so an image always holds exactly the
/// events up to its position.
public final class ReadModels {
    let db: SQLiteConnection

    /// Empty read models (the state before the first event).
    public init() throws {
        db = try SQLiteConnection()
        try db.transaction {
            try db.execute(ProjectionSchema.statements)
            try setMeta("format", Int64(ProjectionSchema.format))
        }
    }

    /// Read models from an image made by `withImage`. Throws `unsupportedFormat` for an image of
    /// another format (the caller rebuilds).
    public init(image: UnsafeRawBufferPointer) throws {
        db = try SQLiteConnection(deserializing: image)
        let found = try db.prepare("SELECT value FROM projection_meta WHERE key = 'format'")
        let format = try found.step() ? Int(found.int64(0)) : 0
        guard format == ProjectionSchema.format else {
            throw ProjectionError.unsupportedFormat(found: format, supported: ProjectionSchema.format)
        }
    }

    /// The log position the models reflect, as given to the last update; nil before any.
    public var position: [UInt8]? {
        get throws {
            let statement = try db.prepare("SELECT value FROM projection_meta WHERE key = 'position'")
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    /// Applies what `feed` adds, then records the position `feed` returns, in one transaction:
    /// if `feed` throws, nothing of it is kept.
    public func update(_ feed: (inout ProjectionUpdate) throws -> [UInt8]) throws {
        try db.transaction {
            var update = try ProjectionUpdate(db: db)
            let position = try feed(&update)
            try update.finish()
            let statement = try db.prepare("INSERT OR REPLACE INTO projection_meta(key, value) VALUES ('position', ?)")
            try statement.bind(1, position)
            try statement.run()
        }
    }

    /// Calls `body` with the database image; the copy is zeroed afterwards.
    public func withImage<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try db.withSerializedImage(body)
    }

    /// Writes an unencrypted SQLite copy of the read models to `path` (which must not exist).
    public func writePlaintextCopy(to path: String) throws {
        // Created empty first so that the copy is readable by its owner only (0600), and never
        // replaces an existing file (VACUUM INTO accepts an existing empty file).
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ProjectionError.cannotCreate(path: path, errno: errno) }
        close(fd)
        let statement = try db.prepare("VACUUM INTO ?")
        try statement.bind(1, path)
        try statement.run()
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
