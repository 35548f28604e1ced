import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// The key table: one data key per label, their destruction (erasure), and the head record that
/// names the table in force.
extension EventLog {
    // MARK: Data keys

    /// A data key of the key table, as the vault sees it: which label, and whether and when it
    /// was destroyed.
    public struct DataKey: Equatable, Sendable {
        public var id: UInt32
        public var label: [UInt8]
        /// When the key was destroyed (nil while it is live), and by which erasure.
        public var erasedAt: Date?
        public var eraseID: [UInt8]?
        /// Data events the key sealed, counted before it was destroyed.
        public var erasedEvents: Int?

        /// The key by id and label while it is live; nil once destroyed.
        public var liveKey: LiveKey? { erasedAt == nil ? LiveKey(id: id, label: label) : nil }
    }

    /// Every data key of the table, live or destroyed, in the order they were made.
    public var dataKeys: [DataKey] { Self.dataKeys(of: savedKeyTable) }

    /// Judges the commit a head record has not caught up with: its audit frames (authenticated,
    /// in order) and the data keys of the table in force. Returns why it cannot follow that head
    /// and table (they are older copies put back), or nil when a crash can have left it.
    public typealias UnheadedCommitCheck = (_ auditFrames: [LogFrame], _ keys: [DataKey]) -> String?

    static func dataKeys(of table: KeyTable) -> [DataKey] {
        table.entries.map { entry in
            switch entry.state {
            case .live: DataKey(id: entry.id, label: entry.label, erasedAt: nil, eraseID: nil, erasedEvents: nil)
            case .erased(let t):
                DataKey(id: entry.id, label: entry.label, erasedAt: Date(timeIntervalSince1970: Double(t.at) / 1000), eraseID: t.eraseID,
                        erasedEvents: Int(clamping: t.events))
            }
        }
    }

    /// Takes over the tombstones of `keys` (destroyed keys of another log: a re-key's source) into
    /// this log's key table, written with the next commit, so that what was erased there stays
    /// refused here.
    public func adoptTombstones(of keys: [DataKey]) throws {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        for key in keys {
            guard let erasedAt = key.erasedAt, let eraseID = key.eraseID else { continue }
            _ = keyTable.addTombstone(for: key.label, at: Int64((erasedAt.timeIntervalSince1970 * 1000).rounded()), eraseID: eraseID)
        }
        keyring.use(keyTable)
    }

    /// Erasures whose keys are destroyed but whose audit record is not known to be in the log
    /// (a crash came between the two): the vault records them, then `confirmErasure`.
    public var unrecordedErasures: [[UInt8]] { savedKeyTable.unrecordedErasures }

    /// Notes in the key table that erasure `eraseID` is recorded in the log.
    public func confirmErasure(_ eraseID: [UInt8]) throws {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        var table = savedKeyTable
        table.markRecorded(eraseID: eraseID)
        try replaceKeyTable(table.sealed(vaultID: vaultID, tableKey: keyring.tableKey))
        try writeHead()
        savedKeyTable = table
        keyTable = table
    }

    /// Destroys the keys `ids`: the table is replaced (new file synced, renamed over the old,
    /// directory synced), then the old file's bytes, still reachable through its open descriptor,
    /// are overwritten with zeros and synced. From then on the frames sealed with those keys are
    /// chained ciphertext that nothing can open. Not inside a transaction.
    /// `events` gives, per key, the data events it sealed, kept in its tombstone.
    public func destroyKeys(_ ids: Set<UInt32>, at date: Date, eraseID: [UInt8], events: [UInt32: Int] = [:]) throws {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        guard !failed, written == committed else { throw EventLogError.writerFailed }
        precondition(eraseID.count == 8, "an erase id is 8 bytes")
        var table = savedKeyTable
        table.erase(ids: ids, at: Int64((date.timeIntervalSince1970 * 1000).rounded()), eraseID: eraseID,
                    events: events.mapValues { UInt64(max($0, 0)) })
        // The old table keeps a name (`keys.sealed.old`) until its bytes are zeroed: a crash in
        // between leaves it for the next writer to finish, never an unlinked copy of the keys.
        try shredOldKeyTable()
        if fileSystem.exists(directory.keys) {
            try fileSystem.link(directory.keys, to: directory.oldKeys)
            try fileSystem.syncDirectory(directory.path)
        }
        try replaceKeyTable(table.sealed(vaultID: vaultID, tableKey: keyring.tableKey))
        try writeHead()
        savedKeyTable = table
        keyTable = table
        keyring.reset(to: table)
        try shredOldKeyTable()
    }

    /// Overwrites the bytes of a key table replaced by `destroyKeys` with zeros, syncs them, and
    /// removes its name. When the replacement never happened (a crash between the link and the
    /// rename), `keys.sealed.old` is a second name of the table in force: only the name goes.
    func shredOldKeyTable() throws {
        guard fileSystem.exists(directory.oldKeys) else { return }
        let old = try fileSystem.open(directory.oldKeys, mode: .readWrite)
        // A table this build wrote is at most `maximumSize`: a larger file (a sparse one put
        // there) was never a key table's second name, and only its name goes, unread.
        let size = try old.size()
        if size <= UInt64(KeyTable.maximumSize) {
            let oldBytes = try old.readBytes(at: 0, count: Int(size))
            let current = try fileSystem.readFileIfPresent(directory.keys, limit: KeyTable.maximumSize + 1)
            if oldBytes != current {
                try [UInt8](repeating: 0, count: Int(size)).withUnsafeBytes { try old.write(at: 0, $0) }
                try old.fullSync()
            }
        }
        try fileSystem.remove(directory.oldKeys)
        try fileSystem.syncDirectory(directory.path)
    }

    /// Writes the head record: the committed position and, for a version-2 log, the key table in
    /// force and the one about to replace it.
    func writeHead(nextKeyTable: [UInt8]? = nil) throws {
        let tables = (keyTableDigest.map { [$0] } ?? []) + (nextKeyTable.map { [$0] } ?? [])
        let head = HeadRecord(vaultID: vaultID, committed: committed, lastFrameOffset: lastFrameOffset, keyTables: tables,
                              auditChain: auditChain)
        let bytes = head.encoded(key: keyring.headKey)
        try fileSystem.replaceAtomically(directory.head, with: bytes)
        headWritten = bytes
    }

    /// Replaces `keys.sealed` with `bytes` so that a crash at any step leaves a table the head
    /// record accepts: the head first names the new table beside the old, then the table is
    /// replaced. The head naming the new one alone is written by the caller (the commit's head,
    /// or `writeHead()`).
    func replaceKeyTable(_ bytes: [UInt8]) throws {
        let digest = FrameCipher.digest(bytes)
        try writeHead(nextKeyTable: digest)
        try fileSystem.replaceAtomically(directory.keys, with: bytes)
        keyTableDigest = digest
    }
}
