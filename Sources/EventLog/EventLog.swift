import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// An append-only log of opaque events, sealed in frames with XChaCha20-Poly1305 and chained
/// with BLAKE2b, with one durable commit per `append`.
///
/// One writer at a time holds the directory's lock; readers are never blocked. Opening checks
/// the head record, the frame it names and what follows it, and a writer cuts a torn tail
/// (reported in `tornTail`): an open costs the tail, not the history. Damage before the head
/// surfaces when the frames holding it are read, naming the offset; `verify` reads everything.
/// The on-disk grammar is docs/log-format.md.
public final class EventLog {
    /// Whether the handle may append.
    public enum AccessMode: Sendable {
        case readOnly
        case readWrite
    }

    /// The key id of the audit key, which is never destroyed: audit events and everything that
    /// belongs to no label.
    public static let auditKeyID: UInt32 = LogFormat.auditKeyID

    /// The directory and its file names.
    public let directory: LogDirectory
    /// Random id of the vault this log belongs to; every frame carries it.
    public let vaultID: [UInt8]
    /// How the log was opened.
    public let mode: AccessMode
    /// The last committed position.
    public private(set) var committed: LogPosition
    /// What opening found after the last commit. Opened for writing, it has been cut away.
    public private(set) var tornTail: TornTail?
    /// Plaintext bytes a frame aims for; a batch larger than this spans several frames.
    /// Kept between 1 byte and the format's cap on a frame, whatever is assigned.
    public var targetFrameSize: Int {
        get { frameSize }
        set { frameSize = Swift.min(Swift.max(newValue, 1), LogFormat.maxPlaintextLength) }
    }
    /// Plaintext bytes an open transaction may hold across all its keys before every pending
    /// batch goes out as a (smaller) frame: an import touching a thousand category-months keeps
    /// this much in memory, not a frame's worth per key, and as much again while those batches
    /// are compressed in the background.
    public var pendingBudget: Int {
        get { pendingLimit }
        set { pendingLimit = newValue }
    }
    // The two settings are stored privately: a public stored property's every access is checked
    // for exclusivity at run time (other modules may access it), and `append` reads both for
    // each event.
    private var frameSize = 1 << 20
    private var pendingLimit = 2 << 20

    /// The log file's format version: 2 for logs this build creates, 1 for older ones (audit-key
    /// frames only, until the vault upgrades them).
    public let formatVersion: UInt16

    let fileSystem: any FileSystem
    let file: any StorageFile
    let lockFile: (any StorageFile)?
    private(set) var keyring: LogKeyring
    /// The data keys as written in `keys.sealed`, and as the open transaction extends them.
    private var keyTable: KeyTable
    private var savedKeyTable: KeyTable
    /// The digest of `keys.sealed` as written, which the head record names (nil for a
    /// version-1 log, which has no key table).
    private var keyTableDigest: [UInt8]?
    private var lastFrameOffset: UInt64
    /// Where the next frame goes: past `committed` while a transaction has written frames.
    private var written: LogPosition
    private var writtenLastFrameOffset: UInt64
    /// The running digest of the audit key's frames (`LogFormat.foldAudit`), committed and as
    /// the open transaction's frames extend it; empty for a version-1 log.
    private var auditChain: [UInt8]
    private var writtenAuditChain: [UInt8]
    private var failed = false
    /// The frame index as far as this process has read or extended it.
    private var frameIndex: FrameIndex?
    /// Batches whose events are being compressed on `compressionQueue` while the caller goes on
    /// adding events, oldest first; each is sealed and written, in order, before anything after it.
    private var inFlight: [CompressionJob] = []
    private let compressionQueue = DispatchQueue(label: "healthvault.frame-compression")

    private init(
        directory: LogDirectory, vaultID: [UInt8], formatVersion: UInt16, mode: AccessMode, committed: LogPosition,
        lastFrameOffset: UInt64, tornTail: TornTail?, fileSystem: any FileSystem,
        file: any StorageFile, lockFile: (any StorageFile)?, keyring: LogKeyring, keyTable: KeyTable, keyTableDigest: [UInt8]?,
        auditChain: [UInt8]
    ) {
        self.auditChain = auditChain
        self.writtenAuditChain = auditChain
        self.formatVersion = formatVersion
        self.directory = directory
        self.vaultID = vaultID
        self.mode = mode
        self.committed = committed
        self.lastFrameOffset = lastFrameOffset
        self.written = committed
        self.writtenLastFrameOffset = lastFrameOffset
        self.tornTail = tornTail
        self.fileSystem = fileSystem
        self.file = file
        self.lockFile = lockFile
        self.keyring = keyring
        self.keyTable = keyTable
        self.savedKeyTable = keyTable
        self.keyTableDigest = keyTableDigest
    }

    /// The position before the first frame.
    public var genesis: LogPosition { Self.genesis(vaultID: vaultID) }

    static func genesis(vaultID: [UInt8]) -> LogPosition {
        LogPosition(sequence: 0, eventCount: 0, offset: UInt64(LogFormat.fileHeaderSize),
                    chainHash: FrameCipher.genesisHash(vaultID: vaultID))
    }

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

    /// Takes the writer lock of the log in `directory` for work outside the log that must not
    /// race a writer (finishing a re-key); released when the returned file is released.
    public static func lockForWriting(directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> any StorageFile {
        try acquireLock(LogDirectory(directory), fileSystem)
    }

    private static func acquireLock(_ names: LogDirectory, _ fileSystem: any FileSystem) throws -> any StorageFile {
        let lock = try fileSystem.open(names.lock, mode: .createIfMissing)
        // A lock released a moment ago can still be held for a few milliseconds: a process that
        // spawns a child shares its open file descriptions with the child until the child's exec.
        // Retrying briefly tells that apart from another writer, which holds it for its whole run.
        for attempt in 0..<40 {
            if try lock.tryLockExclusive() { return lock }
            if attempt < 39 { usleep(5_000) }
        }
        // A long-running writer that lets others in between its commits (`vaultctl serve`) is
        // waited for, up to `serverWait` seconds; `lockWanted` asks it to leave a gap.
        guard serverIsRunning(names, fileSystem) else { throw EventLogError.locked(path: names.lock) }
        let wanted = names.lockWanted(by: getpid())
        _ = try? fileSystem.open(wanted, mode: .createIfMissing)
        defer { try? fileSystem.remove(wanted) }
        let deadline = Date().addingTimeInterval(serverWait)
        while Date() < deadline {
            if try lock.tryLockExclusive() { return lock }
            usleep(1_000)
        }
        throw EventLogError.locked(path: names.lock)
    }

    /// Seconds a command waits for the writer lock while a server holds it between commits.
    static let serverWait = 10.0

    /// Whether a process holds `serve.lock` (a running `vaultctl serve`).
    static func serverIsRunning(_ names: LogDirectory, _ fileSystem: any FileSystem) -> Bool {
        guard fileSystem.exists(names.serverLock), let file = try? fileSystem.open(names.serverLock, mode: .readWrite) else { return false }
        guard let free = try? file.tryLockExclusive() else { return false }
        if free { try? file.unlock() }
        return !free
    }

    /// Marks the log as served by this process until the returned file is released: commands that
    /// find the writer lock taken then wait for a gap between the server's commits.
    public static func markServed(directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> any StorageFile {
        let names = LogDirectory(directory)
        let file = try fileSystem.open(names.serverLock, mode: .createIfMissing)
        guard try file.tryLockExclusive() else { throw EventLogError.locked(path: names.serverLock) }
        return file
    }

    /// Whether a command waits for the writer lock (the server leaves it a gap). Files left by
    /// waiters that died are removed.
    public var lockIsWanted: Bool {
        guard let names = try? fileSystem.contentsOfDirectory(directory.path) else { return false }
        var wanted = false
        for name in names where name.hasPrefix(LogDirectory.lockWantedPrefix) {
            let pid = Int32(name.dropFirst(LogDirectory.lockWantedPrefix.count)) ?? 0
            if pid > 0, kill(pid, 0) == 0 || errno == EPERM {
                wanted = true
            } else {
                try? fileSystem.remove(directory.path + "/" + name)
            }
        }
        return wanted
    }

    /// Cuts a torn tail and records a commit that the head record missed (a crash between the
    /// log's sync and the head's rename).
    private func recover(head: HeadRecord) throws {
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
    private func keepAside(_ torn: TornTail) throws -> TornTail {
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

    private static func inspectOnce(
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
    private static func loadKeyTable(_ names: LogDirectory, version: UInt16, vaultID: [UInt8], tableKey: SecretKey,
                                     fileSystem: any FileSystem) throws -> (KeyTable, [UInt8]?) {
        guard let bytes = try fileSystem.readFileIfPresent(names.keys, limit: KeyTable.maximumSize + 1) else {
            guard version < 2 else { throw EventLogError.keyTableInvalid(path: names.keys, reason: "missing") }
            return (KeyTable(), nil)
        }
        guard bytes.count <= KeyTable.maximumSize else { throw EventLogError.keyTableInvalid(path: names.keys, reason: "over \(KeyTable.maximumSize >> 20) MiB") }
        return (try KeyTable.open(bytes, vaultID: vaultID, tableKey: tableKey, path: names.keys), FrameCipher.digest(bytes))
    }

    // MARK: Writing

    /// Appends `batch` as one durable commit and returns the new committed position.
    ///
    /// The events are sealed into as few frames as `targetFrameSize` allows, written with one
    /// call and made durable with `fdatasync` before the head record is replaced; when this
    /// returns, the batch survives a crash. A batch of several frames commits with its last frame.
    /// If it throws, the batch may or may not be in the log, and this handle refuses further
    /// writes: reopen to recover.
    @discardableResult
    public func append(_ batch: EventBatch) throws -> LogPosition {
        var transaction = try beginTransaction()
        transaction.set(batch, for: LogFormat.auditKeyID)
        return try commit(&transaction)
    }

    /// Starts a commit that may be larger than memory: events added to it are sealed into frames
    /// and written (without the commit flag, unsynced) whenever a frame's worth has gathered;
    /// `commit` writes the rest with the commit flag and makes it all durable. Until then readers
    /// ignore the frames, and a crash leaves them as a torn tail that the next writer cuts.
    public func beginTransaction() throws -> LogTransaction {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        guard !lockReleased else { throw EventLogError.writerFailed }
        guard !failed else { throw EventLogError.writerFailed }
        guard written == committed else { throw EventLogError.writerFailed }
        return LogTransaction(log: ObjectIdentifier(self))
    }

    /// The id of the key that seals events of `label` (for the vault, a category and a month):
    /// its live key, or a new random one, which `commit` writes to the key table before the
    /// frames that use it count as committed.
    public func keyID(forLabel label: [UInt8]) throws -> UInt32 {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        guard formatVersion >= 2 else { return LogFormat.auditKeyID }
        if let entry = keyTable.liveEntry(for: label) { return entry.id }
        let id = keyTable.addKey(for: label)
        keyring.use(keyTable)
        return id
    }

    /// Adds one event to a transaction, sealed with key `keyID` (the audit key by default),
    /// writing full frames as they fill. Events of one key stay in order (so a key's definitions
    /// precede the events that use them); the audit key's frames go out before the data frames
    /// written with them.
    public func append(_ event: UnsafeRawBufferPointer, keyID: UInt32 = EventLog.auditKeyID, to transaction: inout LogTransaction) throws {
        precondition(transaction.log == ObjectIdentifier(self), "a transaction belongs to the log that began it")
        // A key is checked when a run of its events starts in the transaction (keys are not
        // taken away while one is open), not for every event.
        if !transaction.isCurrent(keyID) {
            guard keyring.frameKeys[keyID] != nil else { throw EventLogError.damaged(path: directory.keys, offset: 0, defect: .unknownKey(keyID)) }
        }
        let size = try transaction.append(event, key: keyID)
        if size >= frameSize {
            try flush(keyID == LogFormat.auditKeyID ? [keyID] : [LogFormat.auditKeyID, keyID], of: &transaction)
        }
        if transaction.pendingBytes > pendingLimit {
            try flush([LogFormat.auditKeyID] + transaction.pendingKeys.filter { $0 != LogFormat.auditKeyID }, of: &transaction)
        }
    }

    /// Makes a transaction durable: the new keys go to the key table, the remaining events (audit
    /// key first, or an empty commit-marker frame) go out with the last frame carrying the commit
    /// flag, then `fdatasync`, then the head record.
    @discardableResult
    public func commit(_ transaction: inout LogTransaction) throws -> LogPosition {
        precondition(transaction.log == ObjectIdentifier(self), "a transaction belongs to the log that began it")
        try writeInFlight()
        let keys = transaction.pendingKeys
        guard written != committed || !keys.isEmpty else { return committed }
        try saveKeyTableIfChanged()
        let order = keys.contains(LogFormat.auditKeyID) ? [LogFormat.auditKeyID] + keys.filter { $0 != LogFormat.auditKeyID } : keys
        // With nothing pending, an empty frame of the audit key carries the commit flag.
        let parts = (order.isEmpty ? [LogFormat.auditKeyID] : order).map { part(of: $0, in: transaction) }
        let job = CompressionJob(parts: parts)
        if formatVersion >= LogFormat.firstCompressedVersion {
            // The commit waits for these frames: every core compresses them.
            job.run(workers: Self.commitCompressionWorkers)
        }
        try write(job, commit: true)
        for part in parts { transaction.clear(part.keyID) }
        do {
            try file.sync()
        } catch {
            abandonWrites()
            throw error
        }
        committed = written
        lastFrameOffset = writtenLastFrameOffset
        auditChain = writtenAuditChain
        do {
            try writeHead()
        } catch {
            failed = true
            throw error
        }
        return committed
    }

    /// Drops a transaction's frames from the file, and the keys it made; the log is as it was
    /// before it began.
    public func rollback(_ transaction: inout LogTransaction) throws {
        discardInFlight()
        transaction.clearAll()
        keyTable = savedKeyTable
        keyring.reset(to: keyTable)
        guard written != committed else { return }
        do {
            try file.truncate(to: committed.offset)
            written = committed
            writtenLastFrameOffset = lastFrameOffset
            writtenAuditChain = auditChain
        } catch {
            failed = true
            throw error
        }
    }

    /// Writes the key table when a transaction added keys: atomically, and durably before the
    /// commit that needs them.
    private func saveKeyTableIfChanged() throws {
        guard keyTable.nextID != savedKeyTable.nextID else { return }
        do {
            try replaceKeyTable(keyTable.sealed(vaultID: vaultID, tableKey: keyring.tableKey))
        } catch {
            abandonWrites()
            throw error
        }
        savedKeyTable = keyTable
    }

    /// Hands the events gathered in `transaction` under `keyIDs` (in that order; keys with none
    /// are passed over) to the compression queue as one job, while the caller goes on; they are
    /// sealed and written, in order, when the next job is handed over, or at the commit. A log
    /// that does not compress seals and writes them now.
    private func flush(_ keyIDs: [UInt32], of transaction: inout LogTransaction) throws {
        let parts = keyIDs.map { part(of: $0, in: transaction) }.filter { !$0.batch.isEmpty }
        guard !parts.isEmpty else { return }
        for part in parts { transaction.clear(part.keyID) }
        let job = CompressionJob(parts: parts)
        guard formatVersion >= LogFormat.firstCompressedVersion else {
            try writeInFlight()
            try write(job, commit: false)
            return
        }
        compressionQueue.async { job.run() }
        inFlight.append(job)
        while inFlight.count > 1 { try writeOldestInFlight() }
    }

    /// `keyID`'s events gathered in `transaction`, cut into frames.
    private func part(of keyID: UInt32, in transaction: LogTransaction) -> CompressionJob.Part {
        transaction.withBatch(of: keyID) { batch in
            CompressionJob.Part(keyID: keyID, batch: batch, slices: batch.frameSlices(targetSize: frameSize))
        }
    }

    /// Threads compressing the frames a commit writes.
    static let commitCompressionWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Seals and writes every batch being compressed, in order.
    private func writeInFlight() throws {
        while !inFlight.isEmpty { try writeOldestInFlight() }
    }

    private func writeOldestInFlight() throws {
        let job = inFlight.removeFirst()
        job.wait()
        try write(job, commit: false)
    }

    /// Seals a job's parts after what was written so far (with its compressed frames, once it
    /// has run; a log that does not compress never runs it) and writes them; with `commit`, the
    /// last frame carries the commit flag.
    private func write(_ job: CompressionJob, commit: Bool) throws {
        for (index, part) in job.parts.enumerated() {
            let sealed = seal(part.batch, keyID: part.keyID, after: written, lastFrameOffset: writtenLastFrameOffset,
                              commit: commit && index == job.parts.count - 1,
                              slices: part.slices, compressed: job.compressed.isEmpty ? [] : job.compressed[index])
            try write(sealed, keyID: part.keyID)
        }
    }

    /// Waits for the batches being compressed and forgets them (a rollback or a failed write).
    private func discardInFlight() {
        for job in inFlight { job.wait() }
        inFlight = []
    }

    private func write(_ sealed: (bytes: [UInt8], position: LogPosition, lastFrameOffset: UInt64, hashes: [[UInt8]]), keyID: UInt32) throws {
        let (bytes, position, frameOffset, frameHashes) = sealed
        do {
            try bytes.withUnsafeBytes { try file.write(at: written.offset, $0) }
        } catch {
            abandonWrites()
            throw error
        }
        written = position
        writtenLastFrameOffset = frameOffset
        if keyID == LogFormat.auditKeyID, !writtenAuditChain.isEmpty {
            for hash in frameHashes { writtenAuditChain = LogFormat.foldAudit(writtenAuditChain, hash) }
        }
    }

    /// After a failed write or sync nothing about the tail can be trusted: cut back to the last
    /// commit if possible, and refuse further writes either way (recovery cuts on reopen).
    private func abandonWrites() {
        discardInFlight()
        failed = true
        try? file.truncate(to: committed.offset)
        written = committed
        writtenLastFrameOffset = lastFrameOffset
        writtenAuditChain = auditChain
    }

    /// Seals a batch, cut into `slices`, into consecutive frames following `start`, each frame
    /// with its bytes in `compressed` where it has some (nil, or none given: stored as it is).
    /// With `commit`, the last frame carries the commit flag; no slices then become one empty
    /// commit-marker frame.
    private func seal(_ batch: EventBatch, keyID: UInt32, after start: LogPosition, lastFrameOffset: UInt64, commit: Bool,
                      slices: [(range: Range<Int>, events: Int)], compressed: [[UInt8]?])
        -> (bytes: [UInt8], position: LogPosition, lastFrameOffset: UInt64, hashes: [[UInt8]]) {
        var slices = slices
        if slices.isEmpty && commit { slices = [(0..<0, 0)] }
        func compressedFrame(_ index: Int) -> [UInt8]? { index < compressed.count ? compressed[index] : nil }
        let overhead = LogFormat.frameHeaderSize + LogFormat.tagSize
        var output = [UInt8]()
        let sealedBytes = slices.indices.reduce(0) { $0 + (compressedFrame($1)?.count ?? slices[$1].range.count) }
        output.reserveCapacity(sealedBytes + slices.count * overhead)
        var position = start
        var frameOffset = lastFrameOffset
        var hashes: [[UInt8]] = []
        let key = keyring.frameKeys[keyID]!
        batch.payload.withUnsafeBytes { payload in
            for (index, slice) in slices.enumerated() {
                let raw = slice.range.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: payload[slice.range])
                let compressed = compressedFrame(index)
                let flags = (commit && index == slices.count - 1 ? LogFormat.commitFlag : 0) | (compressed != nil ? LogFormat.deflateFlag : 0)
                let sealedLength = compressed?.count ?? slice.range.count
                let header = FrameHeader(
                    version: formatVersion,
                    flags: flags,
                    keyID: keyID,
                    payloadLength: UInt32(sealedLength + LogFormat.tagSize),
                    sequence: position.sequence + 1,
                    firstEventIndex: position.eventCount,
                    eventCount: UInt32(slice.events),
                    vaultID: vaultID,
                    previousHash: position.chainHash,
                    nonce: Sodium.randomBytes(LogFormat.nonceSize))
                let headerBytes = header.encoded()
                let frameStart = output.count
                output.append(contentsOf: headerBytes)
                output.append(contentsOf: repeatElement(0, count: sealedLength + LogFormat.tagSize))
                let hash = output.withUnsafeMutableBytes { out -> [UInt8] in
                    let headerRegion = UnsafeRawBufferPointer(rebasing: out[frameStart..<frameStart + LogFormat.frameHeaderSize])
                    let cipherRegion = UnsafeMutableRawBufferPointer(rebasing: out[(frameStart + LogFormat.frameHeaderSize)...])
                    func sealInto(_ plaintext: UnsafeRawBufferPointer) {
                        header.nonce.withUnsafeBytes { nonce in
                            FrameCipher.seal(
                                plaintext,
                                header: UnsafeRawBufferPointer(rebasing: headerRegion.prefix(LogFormat.frameHeaderAuthenticatedSize)),
                                nonce: nonce, key: key, into: cipherRegion)
                        }
                    }
                    if let compressed { compressed.withUnsafeBytes { sealInto($0) } } else { sealInto(raw) }
                    return FrameCipher.chainHash(header: headerRegion, ciphertext: UnsafeRawBufferPointer(cipherRegion))
                }
                frameOffset = start.offset + UInt64(frameStart)
                hashes.append(hash)
                position = LogPosition(
                    sequence: header.sequence,
                    eventCount: position.eventCount + UInt64(slice.events),
                    offset: start.offset + UInt64(output.count),
                    chainHash: hash)
            }
        }
        return (output, position, frameOffset, hashes)
    }

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
    private func shredOldKeyTable() throws {
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
    private func writeHead(nextKeyTable: [UInt8]? = nil) throws {
        let tables = (keyTableDigest.map { [$0] } ?? []) + (nextKeyTable.map { [$0] } ?? [])
        let head = HeadRecord(vaultID: vaultID, committed: committed, lastFrameOffset: lastFrameOffset, keyTables: tables,
                              auditChain: auditChain)
        let bytes = head.encoded(key: keyring.headKey)
        try fileSystem.replaceAtomically(directory.head, with: bytes)
        headWritten = bytes
    }

    /// The head record this handle last wrote: while it is still the file's, no other process
    /// wrote in between.
    private var headWritten: [UInt8]?
    private var lockReleased = false

    /// Lets other processes write (a long-running writer between its commits, `vaultctl serve`):
    /// releases the writer lock. `retakeWriterLock` takes it back before the next transaction.
    public func releaseWriterLock() throws {
        guard mode == .readWrite, let lockFile, !lockReleased else { return }
        if headWritten == nil { headWritten = try fileSystem.readFileIfPresent(directory.head, limit: HeadRecord.size + 1) }
        try lockFile.unlock()
        lockReleased = true
    }

    /// Takes the writer lock back, trying for up to `timeout` seconds (`EventLogError.locked`
    /// after). Returns whether the log is as this handle left it; when it is not (another process
    /// committed, erased or re-keyed), this handle must not write again: open the log anew.
    public func retakeWriterLock(timeout: Double) throws -> Bool {
        guard let lockFile, lockReleased else { return true }
        let deadline = Date().addingTimeInterval(timeout)
        while try !lockFile.tryLockExclusive() {
            guard Date() < deadline else { throw EventLogError.locked(path: directory.lock) }
            usleep(1_000)
        }
        lockReleased = false
        let head = try fileSystem.readFileIfPresent(directory.head, limit: HeadRecord.size + 1)
        if head != headWritten { failed = true }
        return !failed
    }

    /// Replaces `keys.sealed` with `bytes` so that a crash at any step leaves a table the head
    /// record accepts: the head first names the new table beside the old, then the table is
    /// replaced. The head naming the new one alone is written by the caller (the commit's head,
    /// or `writeHead()`).
    private func replaceKeyTable(_ bytes: [UInt8]) throws {
        let digest = FrameCipher.digest(bytes)
        try writeHead(nextKeyTable: digest)
        try fileSystem.replaceAtomically(directory.keys, with: bytes)
        keyTableDigest = digest
    }

    // MARK: Reading

    /// A reader over committed frames, from the start or from a position this log returned.
    ///
    /// Starting from a position of another log (or of this log before it was replaced) fails on
    /// the first frame with `chainBroken`.
    public func reader(from start: LogPosition? = nil) throws -> LogReader {
        let start = start ?? genesis
        // A position at or past the end must be the end itself; otherwise it belongs to another
        // log or to this one before it was rolled back, and reading would silently yield nothing.
        if start.offset >= committed.offset, start != committed {
            throw EventLogError.damaged(path: directory.log, offset: start.offset, defect: .chainBroken)
        }
        return LogReader(reader: frameReader, from: start, end: committed.offset)
    }

    /// Where a committed frame is and what it holds, from its header alone.
    public struct FrameSummary: Sendable {
        public var offset: UInt64
        public var sequence: UInt64
        public var keyID: UInt32
        public var firstEventIndex: UInt64
        public var eventCount: Int
        /// The chain hash after this frame.
        public var chainHash: [UInt8]
    }

    /// The committed frames' headers up to `end` (the head record's position by default), in
    /// order, each checked for its place (sequence and first event follow on) and the hash chain
    /// checked through `end`: nothing is decrypted, but every byte was hashed, so a header cannot
    /// be changed to hide a frame from a command that reads only some keys' frames. A command that
    /// needs some frames of one key finds them here instead of decrypting the log.
    ///
    /// The headers come from the frame index (`frames.index`), a checkpoint extended by hashing
    /// only the frames committed after it; the whole chain is hashed once, when there is no
    /// usable index, and the index is then saved.
    public func frameSummaries(through end: LogPosition? = nil) throws -> [FrameSummary] {
        let end = end ?? committed
        let index = try indexedFrames()
        guard end.sequence <= committed.sequence, end.sequence >= genesis.sequence else {
            throw EventLogError.damaged(path: directory.log, offset: end.offset, defect: .chainBroken)
        }
        let count = Int(end.sequence - genesis.sequence)
        let frames = Array(index.frames.prefix(count))
        // `end` must be one of this log's positions: the frame it names ends with its chain hash.
        let reachedHash = frames.last?.chainHash ?? genesis.chainHash
        let reachedOffset = count < index.frames.count ? index.frames[count].offset : committed.offset
        guard reachedHash == end.chainHash, reachedOffset == end.offset else {
            throw EventLogError.damaged(path: directory.log, offset: end.offset, defect: .chainBroken)
        }
        return frames
    }

    /// The frame index, extended to `committed`: loaded once (or rebuilt), then kept in memory.
    private func indexedFrames() throws -> FrameIndex {
        if let frameIndex, frameIndex.position == committed { return frameIndex }
        var index = frameIndex ?? loadFrameIndex() ?? FrameIndex(frames: [], position: genesis)
        let tail = try scanHeaders(from: index.position, through: committed, checkingChain: true)
        index.frames += tail
        index.position = committed
        frameIndex = index
        if !tail.isEmpty { saveFrameIndex(index) }
        return index
    }

    /// The saved index when it is this log's: sealed under this vault's key, at a position this
    /// log passes through (the committed position, or one the next frame's header chains from).
    private func loadFrameIndex() -> FrameIndex? {
        SealedSnapshot.removeLeftovers(of: directory.frameIndex, fileSystem: fileSystem)
        guard let contents = try? SealedSnapshot.read(from: directory.frameIndex, purpose: FrameIndex.purpose, vaultID: vaultID,
                                                      masterKey: keyring.masterKey, fileSystem: fileSystem, limit: 1 << 28),
              contents.position.sequence <= committed.sequence, contents.position.offset <= committed.offset,
              let index = contents.plaintext.withUnsafeBytes({ FrameIndex(plaintext: $0, position: contents.position, genesis: genesis) })
        else { return nil }
        if index.position == committed { return index }
        guard index.position.sequence < committed.sequence,
              case .success(let next)? = try? frameReader.readHeader(at: index.position.offset, fileSize: committed.offset),
              next.header.sequence == index.position.sequence + 1, next.header.previousHash == index.position.chainHash
        else { return nil }
        return index
    }

    /// Saves the index for the next command; a cache, so a failure only costs that command a rebuild.
    private func saveFrameIndex(_ index: FrameIndex) {
        let plaintext = index.plaintext
        try? plaintext.withUnsafeBytes { raw in
            try SealedSnapshot.write(raw, purpose: FrameIndex.purpose, position: index.position, vaultID: vaultID,
                                     masterKey: keyring.masterKey, to: directory.frameIndex, fileSystem: fileSystem)
        }
    }

    /// The committed frames' headers after `start` up to `end`, each checked for its place; with
    /// `checkingChain`, every frame hashed and the chain checked against `end`'s hash.
    private func scanHeaders(from start: LogPosition, through end: LogPosition, checkingChain: Bool) throws -> [FrameSummary] {
        let reader = frameReader
        var summaries: [FrameSummary] = []
        var offset = start.offset
        var expected = (sequence: start.sequence + 1, firstEvent: start.eventCount)
        var chainHash = start.chainHash
        while offset < end.offset {
            let located: FrameReader.LocatedHeader
            switch try reader.readHeader(at: offset, fileSize: end.offset) {
            case .success(let header): located = header
            case .failure(let defect): throw EventLogError.damaged(path: directory.log, offset: offset, defect: defect)
            }
            let header = located.header
            guard header.sequence == expected.sequence else {
                throw EventLogError.damaged(path: directory.log, offset: offset, defect: .sequenceMismatch(expected: expected.sequence, found: header.sequence))
            }
            guard header.firstEventIndex == expected.firstEvent else {
                throw EventLogError.damaged(path: directory.log, offset: offset, defect: .eventIndexMismatch(expected: expected.firstEvent, found: header.firstEventIndex))
            }
            if checkingChain {
                guard header.previousHash == chainHash else {
                    throw EventLogError.damaged(path: directory.log, offset: offset, defect: .chainBroken)
                }
                let ciphertext = try file.readBytes(at: offset + UInt64(LogFormat.frameHeaderSize), count: Int(header.payloadLength))
                chainHash = located.bytes.withUnsafeBytes { h in ciphertext.withUnsafeBytes { FrameCipher.chainHash(header: h, ciphertext: $0) } }
            }
            summaries.append(FrameSummary(offset: offset, sequence: header.sequence, keyID: header.keyID,
                                          firstEventIndex: header.firstEventIndex, eventCount: Int(header.eventCount),
                                          chainHash: checkingChain ? chainHash : []))
            expected = (header.sequence + 1, header.firstEventIndex + UInt64(header.eventCount))
            offset = located.end
        }
        guard !checkingChain || chainHash == end.chainHash else {
            throw EventLogError.damaged(path: directory.log, offset: end.offset, defect: .chainBroken)
        }
        return summaries
    }

    /// Reads the audit key's committed frames, and only those, and hands them to `body` in order,
    /// once all of them are known to be there: their chain hashes, folded in order, must give the
    /// digest the head record holds, so a frame hidden by a changed key id (or a data frame
    /// passed off as an audit one, which fails authentication) is damage. The audit trail costs
    /// its own frames and the log's headers. A version-1 log (no digest) checks the whole chain.
    public func readAuditFrames(_ body: (LogFrame) throws -> Void) throws {
        let audit: [FrameSummary]
        var frames: [LogFrame] = []
        if auditChain.isEmpty {
            audit = try frameSummaries().filter { $0.keyID == LogFormat.auditKeyID }
            try readFrames(audit) { frames.append($0) }
        } else {
            audit = try indexedFrames().frames.filter { $0.keyID == LogFormat.auditKeyID }
            var digest = LogFormat.auditGenesis(vaultID: vaultID)
            try readFrames(audit) { frame in
                digest = LogFormat.foldAudit(digest, frame.position.chainHash)
                frames.append(frame)
            }
            guard digest == auditChain else {
                throw EventLogError.damaged(path: directory.log, offset: committed.offset, defect: .chainBroken)
            }
        }
        for frame in frames { try body(frame) }
    }

    /// Reads, authenticates and decrypts the committed frames `frames` (from `frameSummaries`),
    /// in order, and hands each to `body`. Each frame is checked where it stands (its sequence
    /// and first event); the chain across frames not read is `verify`'s to check.
    public func readFrames(_ frames: [FrameSummary], _ body: (LogFrame) throws -> Void) throws {
        let reader = frameReader
        for summary in frames {
            let expectation = FrameReader.Expectation(sequence: summary.sequence, firstEventIndex: summary.firstEventIndex, previousHash: nil)
            switch try reader.readFrame(at: summary.offset, fileSize: committed.offset, expecting: expectation) {
            case .success(let frame): try body(frame)
            case .failure(let defect): throw EventLogError.damaged(path: directory.log, offset: summary.offset, defect: defect)
            }
        }
    }

    var frameReader: FrameReader {
        FrameReader(file: file, path: directory.log, vaultID: vaultID, keyring: keyring)
    }

    /// Checks every frame of the log in `directory`: structure, authentication, sequence, chain,
    /// and agreement with the head record. Never modifies anything; damage becomes `problems`.
    public static func verify(
        in directory: String, masterKey: SecretKey, fileSystem: any FileSystem = POSIXFileSystem(),
        unheadedCommit: UnheadedCommitCheck? = nil
    ) throws -> VerificationReport {
        let names = LogDirectory(directory)
        guard fileSystem.exists(names.log) else { throw EventLogError.notFound(path: names.log) }
        let file = try fileSystem.open(names.log, mode: .readOnly)
        var report = VerificationReport(frames: 0, events: 0, problems: [])
        do {
            let state = try inspect(file: file, names: names, masterKey: masterKey, fileSystem: fileSystem, verifyAll: true,
                                    unheadedCommit: unheadedCommit)
            report.frames = state.scan.committedFrames
            report.erasedFrames = state.scan.erasedFrames
            report.erasedEvents = state.scan.erasedEvents
            report.events = state.scan.lastCommit.eventCount
            report.tornTail = state.scan.tornTail
            report.committed = state.scan.lastCommit
        } catch let error as EventLogError {
            if case .io = error { throw error }
            report.problems.append(error.description)
        }
        return report
    }
}

@available(*, unavailable)
extension EventLog: Sendable {}
