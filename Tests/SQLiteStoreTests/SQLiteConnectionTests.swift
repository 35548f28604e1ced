import Foundation
import SecureMemory
import SQLiteStore
import Testing
import TestSupport

/// The SQLite wrapper on its own: values bound and read back as SQLite types them, transactions,
/// SQLite's own errors passed on, and a damaged encrypted page told apart from other failures.
@Suite struct SQLiteConnectionTests {
    @Test func boundValuesComeBackAsSQLiteTypesThem() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(a, b, c, d, e, f)")
        let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
        try insert.bind(1, Int64.min)
        try insert.bind(2, 0.1)
        try insert.bind(3, "tab\tand\0nul é")
        try insert.bind(4, [0x00, 0xFF, 0x00])
        try insert.bindNull(5)
        try insert.bind(6, Double?.none)
        try insert.run()
        #expect(db.changes == 1 && db.lastInsertRowID == 1)
        let select = try db.prepare("SELECT a, b, c, d, e, f, typeof(c) FROM t")
        #expect(select.isReadOnly && select.columnCount == 7 && select.columnName(6) == "typeof(c)")
        #expect(try select.step())
        #expect((0..<6).map { select.value($0) } == [.integer(.min), .real(0.1), .text("tab\tand\0nul é"), .blob([0, 0xFF, 0]), .null, .null])
        #expect(select.text(6) == "text" && select.optionalDouble(5) == nil && select.optionalDouble(1) == 0.1)
        #expect(try !select.step())
    }

    @Test func aTransactionThatThrowsLeavesNothingAndOneThatReturnsKeepsAll() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY)")
        struct Abandoned: Error {}
        #expect(throws: Abandoned.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1), (2)")
                throw Abandoned()
            }
        }
        #expect(try db.scalarText("SELECT count(*) FROM t") == "0")
        let kept = try db.transaction { () -> Int in
            try db.execute("INSERT INTO t VALUES (3), (4), (5)")
            return db.changes
        }
        #expect(kept == 3)
        #expect(try db.scalarText("SELECT group_concat(k) FROM t") == "3,4,5")
    }

    /// SQLite's code and message, unchanged: a syntax error, a constraint, a missing table.
    @Test func sqliteErrorsCarryTheirCodeAndMessage() throws {
        let db = try SQLiteConnection()
        try db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY)")
        #expect(throws: SQLiteError(code: 1, message: "near \"SELEC\": syntax error")) { try db.execute("SELEC 1") }
        #expect(throws: SQLiteError(code: 1, message: "no such table: missing")) { _ = try db.prepare("SELECT * FROM missing") }
        try db.execute("INSERT INTO t VALUES (1)")
        let error = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") }
        // The extended code, SQLITE_CONSTRAINT_PRIMARYKEY (19 | 6 << 8): the wrapper reports it
        // whenever its primary code is the one SQLite returned.
        #expect(error?.code == 1_555 && error?.message == "UNIQUE constraint failed: t.k" && error?.isDamage == false, "\(String(describing: error))")
    }

    /// A block of an encrypted database changed on disk: reading it fails as damage
    /// (`SQLITE_IOERR_DATA`), which the read models answer by rebuilding; a wrong key is damage
    /// too, never rows.
    @Test func aChangedEncryptedPageIsDamageNotData() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("t.db")
        let key = SecretKey.random()
        do {
            let db = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
            try db.execute("CREATE TABLE t(v BLOB)")
            try db.transaction {
                let insert = try db.prepare("INSERT INTO t VALUES (randomblob(3000))")
                for _ in 0..<40 { try insert.run() }
            }
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // The third block's ciphertext (after the 64-byte header, blocks of 4096 + 44 bytes).
        bytes[64 + 2 * 4_140 + 100] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
        let error = #expect(throws: SQLiteError.self) { _ = try damaged.scalarText("SELECT sum(length(v)) FROM t") }
        #expect(error?.code == 10 | (32 << 8) && error?.isDamage == true, "\(String(describing: error))")

        let wrongKey = #expect(throws: SQLiteError.self) {
            let other = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: SecretKey.random()))
            _ = try other.scalarText("SELECT count(*) FROM t")
        }
        #expect(wrongKey?.isDamage == true, "\(String(describing: wrongKey))")
    }
}
