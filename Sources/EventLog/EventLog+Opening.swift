import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// Creating and opening a log: the header, the key table, the head record, the frame it names
/// and the tail after it; a torn tail kept aside and cut (docs/log-format.md, "Opening").
extension EventLog {
    // MARK: Creating and opening

    /// Creates an empty log in `directory` (created if needed) and opens it for writing.
    ///
    /// `underLock` runs once the writer lock is held and before anything is created: the place to
    /// check that no other process created a vault meanwhile, and to clear a crashed creation's
    /// leftovers.
    public static func create(
        in directory: String, vaultID: [UInt8], masterKey: SecretKey,
        fileSystem: any FileSystem = POSIXFileSystem(), underLock: () throws -> Void = {}
    ) throws -> EventLog {
        precondition(vaultID.count == LogFormat.vaultIDSize, "a vault id is \(LogFormat.vaultIDSize) bytes")
        let names = LogDirectory(directory)
        try fileSystem.createDirectory(directory)
        let lock = try acquireLock(names, fileSystem)
        try underLock()
        if fileSystem.exists(names.log) { throw EventLogError.alreadyExists(path: names.log) }
        let keyring = LogKeyring(masterKey: masterKey)
        if fileSystem.exists(names.keys) { try fileSystem.remove(names.keys) }
        let file = try fileSystem.open(names.log, mode: .createNew)
        try LogFileHeader(vaultID: vaultID).encoded().withUnsafeBytes { try file.write(at: 0, $0) }
        try file.fullSync()
        // Every version-2 log has its key table, empty at first: a missing one is damage.
        let table = KeyTable().sealed(vaultID: vaultID, tableKey: keyring.tableKey)
        try fileSystem.replaceAtomically(names.keys, with: table)
        let start = genesis(vaultID: vaultID)
        let head = HeadRecord(vaultID: vaultID, committed: start, lastFrameOffset: 0, keyTables: [FrameCipher.digest(table)],
                              auditChain: LogFormat.auditGenesis(vaultID: vaultID))
        try fileSystem.replaceAtomically(names.head, with: head.encoded(key: keyring.headKey))
        return EventLog(
            directory: names, vaultID: vaultID, formatVersion: LogFormat.version, mode: .readWrite, committed: start, lastFrameOffset: 0,
            tornTail: nil, fileSystem: fileSystem, file: file, lockFile: lock, keyring: keyring, keyTable: KeyTable(),
            keyTableDigest: FrameCipher.digest(table), auditChain: LogFormat.auditGenesis(vaultID: vaultID))
    }

    /// Opens an existing log.
    ///
    /// Checks the head record, the frame it names and what follows it; for writing, also takes the
    /// lock, cuts a torn tail and brings the head up to date. Damage earlier surfaces when the
    /// frames are read (`verify` reads them all).
    ///
    /// `unheadedCommit` judges a commit the head record has not caught up with (a crash between the
    /// log's sync and the head's rename leaves one) before anything is rewritten: its audit frames,
    /// and the keys of the table in force. The vault refuses one that records an erasure the table
    /// does not show: the head and key table of before that erasure, put back.
    public static func open(
        in directory: String, masterKey: SecretKey, mode: AccessMode,
        fileSystem: any FileSystem = POSIXFileSystem(), unheadedCommit: UnheadedCommitCheck? = nil
    ) throws -> EventLog {
        let names = LogDirectory(directory)
        guard fileSystem.exists(names.log) else { throw EventLogError.notFound(path: names.log) }
        let lock = mode == .readWrite ? try acquireLock(names, fileSystem) : nil
        let file = try fileSystem.open(names.log, mode: mode == .readWrite ? .readWrite : .readOnly)
        let state = try inspect(
            file: file, names: names, masterKey: masterKey, fileSystem: fileSystem,
            verifyAll: false, unheadedCommit: unheadedCommit)
        let log = EventLog(
            directory: names, vaultID: state.vaultID, formatVersion: state.formatVersion, mode: mode, committed: state.scan.lastCommit,
            lastFrameOffset: state.scan.lastCommitFrameOffset, tornTail: state.scan.tornTail,
            fileSystem: fileSystem, file: file, lockFile: lock, keyring: state.keyring, keyTable: state.keyTable,
            keyTableDigest: state.keyTableDigest, auditChain: state.auditChain)
        if mode == .readWrite {
            try log.recover(head: state.head)
        }
        return log
    }

    /// The format version in the file header of the log in `directory` (nothing else is read).
    public static func formatVersion(in directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> UInt16 {
        let names = LogDirectory(directory)
        guard fileSystem.exists(names.log) else { throw EventLogError.notFound(path: names.log) }
        let file = try fileSystem.open(names.log, mode: .readOnly)
        return try LogFileHeader.decode(try file.readBytes(at: 0, count: LogFormat.fileHeaderSize), path: names.log).version
    }

    /// Cuts a torn tail and records a commit that the head record missed (a crash between the
    /// log's sync and the head's rename).
    func recover(head: HeadRecord) throws {
        // An erase that crashed before zeroing the table it replaced.
        try shredOldKeyTable()
        if let torn = tornTail {
            tornTail = try keepAside(torn)
            try file.truncate(to: torn.offset)
            try file.fullSync()
        }
        // Also when the head still names a key table being replaced: it names the one in force.
        if committed != head.committed || head.keyTables != (keyTableDigest.map { [$0] } ?? []) || head.auditChain != auditChain {
            try writeHead()
        }
    }

    /// Copies the bytes of a torn tail to the first free `events.log.torn.N` (synced, with the
    /// directory) before they are cut: a crash leaves only unacknowledged bytes there, but an
    /// older head put back over a log cut inside the frame after it looks the same, and then they
    /// are a commit. Nothing is cut unseen; the vault records the cut in the audit trail.
    func keepAside(_ torn: TornTail) throws -> TornTail {
        let bytes = try file.readBytes(at: torn.offset, count: Int(torn.length))
        var number = 1
        while fileSystem.exists(directory.path + "/" + LogDirectory.tornPrefix + String(number)) { number += 1 }
        let name = LogDirectory.tornPrefix + String(number)
        try fileSystem.replaceAtomically(directory.path + "/" + name, with: bytes)
        var kept = torn
        kept.keptAs = name
        kept.digest = FrameCipher.digest(bytes)
        return kept
    }

    struct InspectedState {
        var vaultID: [UInt8]
        var formatVersion: UInt16
        var head: HeadRecord
        var keyring: LogKeyring
        var keyTable: KeyTable
        var keyTableDigest: [UInt8]?
        /// The audit digest at the last commit (the head's, with the audit frames of a commit the
        /// head missed folded in).
        var auditChain: [UInt8]
        var scan: LogScanner.Result
    }

    /// Reads header and head record and scans the frames: all of them (`verifyAll`), or the head's
    /// own frame and what follows. Throws on damage or rollback.
    static func inspect(
        file: any StorageFile, names: LogDirectory, masterKey: SecretKey, fileSystem: any FileSystem,
        verifyAll: Bool, unheadedCommit: UnheadedCommitCheck? = nil, onFrame: (LogFrame) throws -> Void = { _ in }
    ) throws -> InspectedState {
        // A reader holds no lock: between its reading the head and the log's size, a writer can
        // commit and start its next append, which looks like a head left behind. A head that
        // changed meanwhile says so; read again.
        var attempt = 0
        while true {
            let headBefore = try fileSystem.readFileIfPresent(names.head, limit: HeadRecord.size + 1)
            do {
                return try inspectOnce(file: file, names: names, masterKey: masterKey, fileSystem: fileSystem, verifyAll: verifyAll,
                                       unheadedCommit: unheadedCommit, onFrame: onFrame)
            } catch let error as EventLogError {
                attempt += 1
                // So does a key added by a commit between reading the key table and the frames.
                let raced: Bool
                switch error {
                case .headBehindLog, .damaged(_, _, .unknownKey), .keyTableInvalid: raced = true
                default: raced = false
                }
                guard raced, attempt < 3,
                      try fileSystem.readFileIfPresent(names.head, limit: HeadRecord.size + 1) != headBefore else { throw error }
            }
        }
    }

    static func inspectOnce(
        file: any StorageFile, names: LogDirectory, masterKey: SecretKey, fileSystem: any FileSystem,
        verifyAll: Bool, unheadedCommit: UnheadedCommitCheck?, onFrame: (LogFrame) throws -> Void
    ) throws -> InspectedState {
        var keyring = LogKeyring(masterKey: masterKey)
        let header = try LogFileHeader.decode(try file.readBytes(at: 0, count: LogFormat.fileHeaderSize), path: names.log)
        // The head is read before the log's size, so that a concurrent append cannot make a
        // consistent log look rolled back.
        guard let headBytes = try fileSystem.readFileIfPresent(names.head, limit: HeadRecord.size + 1) else {
            throw EventLogError.headRecordInvalid(path: names.head, reason: "missing")
        }
        let head = try HeadRecord.decode(headBytes, key: keyring.headKey, path: names.head)
        guard head.vaultID == header.vaultID else {
            throw EventLogError.headRecordInvalid(path: names.head, reason: "belongs to another vault")
        }
        // The key table is replaced before the head of the commit that first uses a new key, so
        // read after the head it holds every key the frames up to the head need.
        let (keyTable, keyTableDigest) = try loadKeyTable(names, version: header.version, vaultID: header.vaultID,
                                                          tableKey: keyring.tableKey, fileSystem: fileSystem)
        if let keyTableDigest {
            // The head names the table in force (and, while a writer replaces it, the next): an
            // older copy put back, one that still holds keys an erasure destroyed, is refused.
            guard !head.keyTables.isEmpty, head.auditChain.count == LogFormat.hashSize else {
                throw EventLogError.headRecordInvalid(path: names.head, reason: "a version-1 head record for a version-2 log")
            }
            guard head.keyTables.contains(keyTableDigest) else {
                throw EventLogError.keyTableInvalid(path: names.keys, reason: "not the one the head record names: an older or another copy was put back")
            }
        }
        keyring.use(keyTable)
        let fileSize = try file.size()
        let reader = FrameReader(file: file, path: names.log, vaultID: header.vaultID, keyring: keyring)
        let scanner = LogScanner(reader: reader)
        let start = genesis(vaultID: header.vaultID)
        let claimed = head.committed

        // The log holds less than the head names. Damage in what it holds is the more precise
        // diagnosis (a deleted middle frame also shortens the file), so a scan looks for it first.
        func rolledBack() throws -> EventLogError {
            let found = try scanner.scan(from: start, startFrameOffset: 0, fileSize: fileSize, acknowledged: claimed.sequence).lastCommit.sequence
            return .rolledBack(path: names.log, headSequence: claimed.sequence, logSequence: found)
        }

        // Commits found past the head's: a crash leaves at most one.
        var commitsPastHead = 0
        var auditPastHead: [LogFrame] = []
        func observe(_ frame: LogFrame) throws {
            if frame.isCommit, frame.sequence > claimed.sequence { commitsPastHead += 1 }
            if frame.sequence > claimed.sequence, frame.keyID == LogFormat.auditKeyID { auditPastHead.append(frame) }
            try onFrame(frame)
        }

        let result: LogScanner.Result
        if verifyAll {
            result = try scanner.scan(from: start, startFrameOffset: 0, fileSize: fileSize, acknowledged: claimed.sequence) { frame in
                if frame.sequence == claimed.sequence, frame.position != claimed || !frame.isCommit {
                    throw try rolledBack()
                }
                try observe(frame)
            }
            if result.lastCommit.sequence < claimed.sequence {
                if fileSize < claimed.offset {
                    throw EventLogError.rolledBack(path: names.log, headSequence: claimed.sequence, logSequence: result.lastCommit.sequence)
                }
                if let defect = result.tailDefect, defect.offset < claimed.offset {
                    throw EventLogError.damaged(path: names.log, offset: defect.offset, defect: defect.defect)
                }
                throw try rolledBack()
            }
        } else {
            guard fileSize >= claimed.offset else { throw try rolledBack() }
            if claimed.sequence > 0 {
                let anchor = FrameReader.Expectation(sequence: claimed.sequence, firstEventIndex: nil, previousHash: nil)
                switch try reader.readFrame(at: head.lastFrameOffset, fileSize: fileSize, expecting: anchor) {
                case .failure(.sequenceMismatch), .failure(.badMagic):
                    throw try rolledBack()
                case .failure(let defect):
                    throw EventLogError.damaged(path: names.log, offset: head.lastFrameOffset, defect: defect)
                case .success(let frame):
                    guard frame.position == claimed, frame.isCommit else { throw try rolledBack() }
                }
            }
            result = try scanner.scan(from: claimed, startFrameOffset: head.lastFrameOffset, fileSize: fileSize, acknowledged: claimed.sequence,
                                      onFrame: observe)
        }
        // A crash leaves at most one commit the head has not caught up with, and never an
        // unfinished frame after it: the head is replaced after every commit, under the lock,
        // before the next append starts. More commits, or one and a cut after it, mean an older
        // head put back (over a cut log).
        if commitsPastHead > 1 || (commitsPastHead == 1 && result.tornTail != nil) {
            throw EventLogError.headBehindLog(path: names.log, headSequence: claimed.sequence, logSequence: result.lastCommit.sequence,
                                              commitsPastHead: commitsPastHead, tornOffset: result.tornTail?.offset)
        }
        let unheadedAudit = auditPastHead.filter { $0.sequence <= result.lastCommit.sequence }
        // The one commit a crash can leave must be one the head and key table in force could
        // have preceded: an erasure committed after them says they were put back.
        if commitsPastHead == 1, let unheadedCommit,
           let reason = unheadedCommit(unheadedAudit, dataKeys(of: keyTable)) {
            throw EventLogError.olderHeadAndKeyTable(path: names.head, reason: reason)
        }
        var auditChain = head.auditChain
        if !auditChain.isEmpty {
            for frame in unheadedAudit { auditChain = LogFormat.foldAudit(auditChain, frame.position.chainHash) }
        }
        return InspectedState(vaultID: header.vaultID, formatVersion: header.version, head: head, keyring: keyring,
                              keyTable: keyTable, keyTableDigest: keyTableDigest, auditChain: auditChain, scan: result)
    }

    /// The key table of the log in `names` and its file's digest (a version-1 log has none).
    static func loadKeyTable(_ names: LogDirectory, version: UInt16, vaultID: [UInt8], tableKey: SecretKey,
                                     fileSystem: any FileSystem) throws -> (KeyTable, [UInt8]?) {
        guard let bytes = try fileSystem.readFileIfPresent(names.keys, limit: KeyTable.maximumSize + 1) else {
            guard version < 2 else { throw EventLogError.keyTableInvalid(path: names.keys, reason: "missing") }
            return (KeyTable(), nil)
        }
        guard bytes.count <= KeyTable.maximumSize else { throw EventLogError.keyTableInvalid(path: names.keys, reason: "over \(KeyTable.maximumSize >> 20) MiB") }
        return (try KeyTable.open(bytes, vaultID: vaultID, tableKey: tableKey, path: names.keys), FrameCipher.digest(bytes))
    }
}
