import Foundation
import SecureMemory
import Testing
import TestSupport
import SQLiteStore

/// The page-encrypting VFS under real SQLite files: what SQLite reads back is what it wrote, at
/// any page size; rollbacks and hot journals restore the pages; nothing on disk is readable.
@Suite struct PageCipherTests {
    /// A marker every row carries: it must never appear in a file.
    static let marker = Array("HEALTHVAULT-PLAINTEXT-MARKER".utf8)

    /// Inserts, updates and deletes driven by `seed`, on `db`, in a few transactions.
    static func churn(_ db: SQLiteConnection, seed: UInt64, rows: Int = 1_500) throws {
        var rng = SeededRandom(seed: seed)
        try db.execute("CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        let insert = try db.prepare("INSERT OR REPLACE INTO t(k, v) VALUES (?, ?)")
        let delete = try db.prepare("DELETE FROM t WHERE k = ?")
        for _ in 0..<4 {
            try db.transaction {
                for _ in 0..<rows / 4 {
                    let key = Int64(rng.next() % UInt64(rows))
                    if rng.next() % 5 == 0 {
                        try delete.bind(1, key)
                        try delete.run()
                    } else {
                        let length = Int(rng.next() % 3_000)
                        try insert.bind(1, key)
                        try insert.bind(2, marker + (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
                        try insert.run()
                    }
                }
            }
        }
    }

    static func rows(_ db: SQLiteConnection) throws -> [Int64: [UInt8]] {
        var result: [Int64: [UInt8]] = [:]
        let all = try db.prepare("SELECT k, v FROM t")
        while try all.step() { result[all.int64(0)] = all.blob(1) }
        return result
    }

    static func holdsMarker(_ path: String) throws -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        return try Data(contentsOf: URL(fileURLWithPath: path)).range(of: Data(marker)) != nil
    }

    /// Page sizes other than the block size make SQLite's writes straddle blocks: every partial
    /// block is read, changed and written again.
    @Test(arguments: [512, 1_024, 4_096, 16_384, 65_536])
    func sqliteReadsBackWhatItWroteAtAnyPageSize(pageSize: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("t.db")
        let key = SecretKey.random()
        let plain = try SQLiteConnection()
        try Self.churn(plain, seed: UInt64(pageSize))
        do {
            let db = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
            try db.execute("PRAGMA page_size = \(pageSize)")
            try Self.churn(db, seed: UInt64(pageSize))
        }
        let reopened = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
        #expect(try reopened.scalarText("PRAGMA page_size") == String(pageSize))
        #expect(try reopened.scalarText("PRAGMA integrity_check") == "ok")
        #expect(try Self.rows(reopened) == Self.rows(plain))
        #expect(try !Self.holdsMarker(path))
        // Physical size: the header, then one block of 4096 + 44 bytes per 4096 logical bytes.
        let pages = Int(try reopened.scalarText("PRAGMA page_count") ?? "0")!
        let logical = pages * pageSize
        let physical = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(physical == 64 + (logical + 4095) / 4096 * (4096 + 44))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    /// A transaction larger than the page cache spills changed pages into the database file
    /// before it commits, the old ones saved in the (encrypted) journal first: a rollback reads
    /// them back from it.
    @Test func aRollbackAfterTheCacheSpilledRestoresEveryPage() throws {
        let directory = TemporaryDirectory()
        let db = try SQLiteConnection(path: directory.file("t.db"), vfs: try PageCipherVFS(key: SecretKey.random()))
        try Self.churn(db, seed: 7, rows: 4_000)
        let before = try Self.rows(db)
        try db.execute("PRAGMA cache_size = 10")
        struct Abandoned: Error {}
        #expect(throws: Abandoned.self) {
            try db.transaction {
                try db.execute("UPDATE t SET v = zeroblob(length(v)) WHERE k % 2 = 0")
                try db.execute("DELETE FROM t WHERE k % 3 = 0")
                #expect(FileManager.default.fileExists(atPath: directory.file("t.db-journal")))
                #expect(try !Self.holdsMarker(directory.file("t.db-journal")))
                // A second name for the journal's inode, to see what became of its bytes.
                try FileManager.default.linkItem(atPath: directory.file("t.db-journal"), toPath: directory.file("journal-seen"))
                throw Abandoned()
            }
        }
        #expect(try Self.rows(db) == before)
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
        // The journal is gone, and was zeroed first: its inode, kept by the second name, holds
        // nothing but zeros.
        #expect(!FileManager.default.fileExists(atPath: directory.file("t.db-journal")))
        let seen = try Data(contentsOf: URL(fileURLWithPath: directory.file("journal-seen")))
        #expect(seen.count > 4096 && seen.allSatisfy { $0 == 0 }, "\(seen.count) bytes, \(seen.filter { $0 != 0 }.count) not zero")
    }

    /// The files as a crash mid-transaction leaves them (the database partly overwritten, the
    /// journal holding the old pages): the next connection finds the hot journal, rolls back
    /// through the cipher, and sees the last committed state.
    @Test func aHotJournalLeftByACrashRollsBack() throws {
        let directory = TemporaryDirectory()
        let crashed = TemporaryDirectory()
        let key = SecretKey.random()
        let db = try SQLiteConnection(path: directory.file("t.db"), vfs: try PageCipherVFS(key: key))
        try Self.churn(db, seed: 11, rows: 4_000)
        let committed = try Self.rows(db)
        try db.execute("PRAGMA cache_size = 10")
        try db.execute("BEGIN IMMEDIATE")
        try db.execute("UPDATE t SET v = zeroblob(length(v) + 7)")
        try db.execute("DELETE FROM t WHERE k % 4 = 1")
        // The moment of the crash: copy the files as they are now.
        for name in ["t.db", "t.db-journal"] {
            try FileManager.default.copyItem(atPath: directory.file(name), toPath: crashed.file(name))
        }
        try db.execute("ROLLBACK")
        #expect(try Data(contentsOf: URL(fileURLWithPath: crashed.file("t.db")))
                != Data(contentsOf: URL(fileURLWithPath: directory.file("t.db"))))  // the crash left changed pages
        let recovered = try SQLiteConnection(path: crashed.file("t.db"), vfs: try PageCipherVFS(key: key))
        #expect(try Self.rows(recovered) == committed)
        #expect(try recovered.scalarText("PRAGMA integrity_check") == "ok")
        #expect(!FileManager.default.fileExists(atPath: crashed.file("t.db-journal")))
    }

    /// A journal whose blocks do not authenticate (cut or damaged as a crash may leave one before
    /// the database was touched) is not played back: the database stays as committed.
    @Test func anUnreadableJournalIsNotPlayedBack() throws {
        let directory = TemporaryDirectory()
        let key = SecretKey.random()
        let path = directory.file("t.db")
        var committed: [Int64: [UInt8]] = [:]
        do {
            let db = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
            try Self.churn(db, seed: 13, rows: 1_000)
            committed = try Self.rows(db)
        }
        // A journal from another transaction, every block garbled.
        let other = TemporaryDirectory()
        let db = try SQLiteConnection(path: other.file("t.db"), vfs: try PageCipherVFS(key: key))
        try Self.churn(db, seed: 13, rows: 1_000)
        try db.execute("PRAGMA cache_size = 10")
        try db.execute("BEGIN IMMEDIATE")
        try db.execute("UPDATE t SET v = zeroblob(10)")
        var journal = try Data(contentsOf: URL(fileURLWithPath: other.file("t.db-journal")))
        try db.execute("ROLLBACK")
        for i in stride(from: 64 + 40, to: journal.count, by: 4_140) { journal[i] ^= 0xFF }
        try journal.write(to: URL(fileURLWithPath: path + "-journal"))
        let reopened = try SQLiteConnection(path: path, vfs: try PageCipherVFS(key: key))
        #expect(try Self.rows(reopened) == committed)
        #expect(try reopened.scalarText("PRAGMA integrity_check") == "ok")
    }
}
