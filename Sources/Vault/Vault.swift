import EventLog
import Foundation
import Projections
import SecureMemory
import VaultEvents

/// A person's vault: one directory holding the keyslot and the encrypted event log.
///
/// This is the facade `vaultctl` talks to. It turns passphrases into keys, health facts into
/// events, and events into log batches; it never writes anything readable to the directory.
public final class Vault {
    /// The vault directory.
    public let directory: String
    let log: EventLog
    let masterKey: SecretKey
    let fileSystem: any FileSystem

    init(directory: String, log: EventLog, masterKey: SecretKey, fileSystem: any FileSystem) {
        self.directory = directory
        self.log = log
        self.masterKey = masterKey
        self.fileSystem = fileSystem
    }

    /// Path of the keyslot inside a vault directory.
    public static func keyslotPath(in directory: String) -> String { directory + "/keyslot" }

    /// Files a crashed `init` may leave behind without a keyslot; they hold nothing recoverable.
    static let initLeftovers: Set<String> = [
        "events.log", "events.head", "events.head.tmp", "events.lock", "keys.sealed", "keys.sealed.tmp", "keyslot.tmp", identityFileName,
        PendingBackupRuns.publicKeyFileName, PendingBackupRuns.publicKeyFileName + ".tmp",
    ]

    /// Whether `name` is something a crashed `init` may leave (the identity's temporary names too).
    static func isInitLeftover(_ name: String) -> Bool {
        initLeftovers.contains(name) || name.hasPrefix(identityFileName + ".tmp.")
    }

    // MARK: Lifecycle

    /// Creates a vault in `directory` (made if missing; it must hold no vault or other files).
    ///
    /// The keyslot is written last: until it exists there is no vault, and a crashed `init` can
    /// simply be run again.
    public static func create(
        at directory: String, passphrase: Passphrase, kdf: KDFParameters, kdfName: String,
        now: Date = Date(), fileSystem: any FileSystem = POSIXFileSystem()
    ) throws -> Vault {
        guard !passphrase.isEmpty else { throw VaultError.emptyPassphrase }
        let keyslotPath = keyslotPath(in: directory)
        func refuseUnlessEmptyOrLeftovers() throws -> [String] {
            guard fileSystem.exists(directory) else { return [] }
            let names = try fileSystem.contentsOfDirectory(directory)
            if names.contains("keyslot") || names.contains(where: { !isInitLeftover($0) }) {
                throw VaultError.directoryNotEmpty(path: directory)
            }
            return names
        }
        _ = try refuseUnlessEmptyOrLeftovers()
        try restrictToOwner(directory)
        let masterKey = SecretKey.random()
        let vaultID = randomVaultID()
        // Checked again under the lock: another init may have finished meanwhile.
        let log = try EventLog.create(in: directory, vaultID: vaultID, masterKey: masterKey, fileSystem: fileSystem) {
            for name in try refuseUnlessEmptyOrLeftovers() where name != "events.lock" {
                try fileSystem.remove(directory + "/" + name)
            }
        }
        let vault = Vault(directory: directory, log: log, masterKey: masterKey, fileSystem: fileSystem)
        let identity = VaultIdentity.generate()
        try vault.append([.vaultCreated(at: now, kdf: kdfName), .identityRecorded(IdentityRecord(identity, reason: .created, at: now))])
        try vault.writeIdentity(identity, to: vault.identityPath)
        // The key runs of `backup` without the passphrase record themselves to (docs/backup.md).
        try PendingBackupRuns.writePublicKey(in: directory, vaultID: vaultID, masterKey: masterKey, fileSystem: fileSystem)
        let keyslot = try Keyslot.seal(masterKey: masterKey, vaultID: vaultID, passphrase: passphrase, kdf: kdf)
        try keyslot.write(to: keyslotPath, fileSystem: fileSystem)
        return vault
    }

    /// An existing directory given to `init` becomes the owner's alone (0700), as a new one is
    /// made: a group- or world-writable vault directory would let others swap its files.
    static func restrictToOwner(_ directory: String) throws {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: directory),
              attributes[.type] as? FileAttributeType == .typeDirectory,
              let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 else { return }
        do {
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
        } catch {
            throw VaultError.cannotWrite(path: directory, reason: "is open to other users (mode \(String(mode, radix: 8))) and could not be made private: \(error.localizedDescription)")
        }
    }

    /// Opens the vault in `directory`. Read-only handles never block a writer and are never blocked,
    /// except during the last few milliseconds of a re-key (the file moves of `passwd --rekey`),
    /// which they wait out or report as a writer at work.
    public static func open(
        at directory: String, passphrase: Passphrase, mode: EventLog.AccessMode = .readOnly,
        fileSystem: any FileSystem = POSIXFileSystem()
    ) throws -> Vault {
        var attempt = 0
        while true {
            let (masterKey, keyslot) = try unlockReturningKeyslot(directory: directory, passphrase: passphrase, writer: mode == .readWrite,
                                                                  fileSystem: fileSystem)
            do {
                if mode == .readWrite { try upgradeIfNeeded(in: directory, masterKey: masterKey, fileSystem: fileSystem) }
                let log = try EventLog.open(in: directory, masterKey: masterKey, mode: mode, fileSystem: fileSystem,
                                            unheadedCommit: judgeUnheadedCommit)
                let vault = Vault(directory: directory, log: log, masterKey: masterKey, fileSystem: fileSystem)
                if mode == .readWrite { try vault.finishOpeningForWriting() }
                return vault
            } catch where error is EventLogError || error is StorageError {
                // A re-key finishing between the unlock and the open (a new log under the old key,
                // or its keyslot moved meanwhile) is no damage: unlock again.
                attempt += 1
                let rekeying = fileSystem.exists(directory + "/" + rekeyCommitted) || fileSystem.exists(directory + "/" + upgradeCommitted)
                    || (try? Keyslot.read(from: keyslotPath(in: directory), fileSystem: fileSystem)) != keyslot
                guard attempt < 3, rekeying else { throw error }
                usleep(20_000)
            }
        }
    }

    static func unlock(directory: String, passphrase: Passphrase, writer: Bool = false, fileSystem: any FileSystem) throws -> SecretKey {
        try unlockReturningKeyslot(directory: directory, passphrase: passphrase, writer: writer, fileSystem: fileSystem).0
    }

    /// The master key, and the keyslot it came from (`open` compares it with the file's after a
    /// failure, to tell a re-key that moved the files meanwhile from damage).
    private static func unlockReturningKeyslot(directory: String, passphrase: Passphrase, writer: Bool,
                                               fileSystem: any FileSystem) throws -> (SecretKey, Keyslot) {
        try finishInterruptedRekey(in: directory, writer: writer, fileSystem: fileSystem)
        let path = keyslotPath(in: directory)
        guard fileSystem.exists(path) else { throw VaultError.noVault(path: directory) }
        let keyslot = try Keyslot.read(from: path, fileSystem: fileSystem)
        return (try keyslot.unlock(passphrase: passphrase), keyslot)
    }

    /// Checks every frame and every event of the vault's log without changing anything (but for
    /// finishing a re-key that committed before a crash, as every open does).
    public static func verify(
        at directory: String, passphrase: Passphrase, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws -> VerificationReport {
        let masterKey = try unlock(directory: directory, passphrase: passphrase, fileSystem: fileSystem)
        var report = try EventLog.verify(in: directory, masterKey: masterKey, fileSystem: fileSystem, unheadedCommit: judgeUnheadedCommit)
        guard report.isOK else { return report }
        // Frames are sound; every event in them must also decode.
        let log = try EventLog.open(in: directory, masterKey: masterKey, mode: .readOnly, fileSystem: fileSystem,
                                    unheadedCommit: judgeUnheadedCommit)
        var reader = try log.reader()
        var decoders = KeyScopedTables.Decoders()
        var erasures: [ErasureRecord] = []
        while let frame = try reader.next() {
            let decoder = decoders.decoder(for: frame)
            frame.forEachEvent { index, bytes in
                do {
                    if case .erased(let record)? = try decoder.decode(bytes, index: index) { erasures.append(record) }
                } catch { report.problems.append("\(error)") }
            }
        }
        // Every erasure the log records is in the key table as tombstones: a table of before one
        // (put back with a head of its time, over a log cut or not) holds keys it destroyed.
        if let problem = erasureProblem(erasures, keys: log.dataKeys) {
            report.problems.append("\(LogDirectory(directory).keys): \(problem): an older key table was put back")
        }
        if let problem = Vault(directory: directory, log: log, masterKey: masterKey, fileSystem: fileSystem)
            .readModelProblem(erasuresInLog: Set(erasures.map(\.eraseID))) {
            report.problems.append(problem)
        }
        // Not damage, but not final yet: the destroyed keys may still have a second name, and the
        // read models still hold the months until a command catches them up.
        if !log.unrecordedErasures.isEmpty || fileSystem.exists(LogDirectory(directory).oldKeys) {
            report.warnings.append("an erase was interrupted before it finished (its keys are destroyed; the key table's old copy or the read models' "
                                   + "purge is left): the next command that writes finishes it")
        }
        return report
    }

    /// Rewraps the master key under a new passphrase and records the change in the audit trail.
    ///
    /// Only the keyslot is rewritten, atomically: a crash at any step leaves either the old or the
    /// new passphrase working. The writer lock is held throughout, so no other command races it.
    public static func changePassphrase(
        at directory: String, from old: Passphrase, to new: Passphrase, kdf: KDFParameters? = nil,
        now: Date = Date(), fileSystem: any FileSystem = POSIXFileSystem()
    ) throws {
        guard !new.isEmpty else { throw VaultError.emptyPassphrase }
        let vault = try open(at: directory, passphrase: old, mode: .readWrite, fileSystem: fileSystem)
        let path = keyslotPath(in: directory)
        let current = try Keyslot.read(from: path, fileSystem: fileSystem)
        try current.rewrapped(from: old, to: new, kdf: kdf).write(to: path, fileSystem: fileSystem)
        try vault.append([.passphraseChanged(at: now)])
    }

    // MARK: Events

    /// Appends events as one durable commit: data events under the key of their category and
    /// month (`DataLabel`), the rest under the audit key.
    @discardableResult
    public func append(_ events: [VaultEvent]) throws -> LogPosition {
        var transaction = try log.beginTransaction()
        do {
            for event in events {
                let keyID = try DataLabel.of(event).map { try log.keyID(forLabel: $0.bytes) } ?? EventLog.auditKeyID
                let encoder = try tables.encoder(for: keyID)
                let (bytes, _) = encoder.encode(event)
                // The definitions the event needs go under its own key, ahead of it.
                for definition in encoder.takeDefinitions() {
                    try definition.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
                }
                try bytes.withUnsafeBytes { try log.append($0, keyID: keyID, to: &transaction) }
            }
            return try log.commit(&transaction)
        } catch {
            try? log.rollback(&transaction)
            // The encoders assigned ids that never reached the log.
            tables.reset()
            throw error
        }
    }

    /// Every event in the log, in order, with its log-wide index (definitions are not events).
    public func allEvents() throws -> [(index: UInt64, event: VaultEvent)] {
        var result: [(UInt64, VaultEvent)] = []
        try forEachEvent { index, event in result.append((index, event)) }
        return result
    }

    /// Calls `body` with the audit events only (imports, goals, recipients, consents, exports,
    /// erasures, passphrase changes). Only the audit key's frames are read (and the log's
    /// headers): the consent ledger and `history` cost the audit trail, not the data.
    public func forEachAuditEvent(_ body: (UInt64, VaultEvent) throws -> Void) throws {
        let decoder = EventDecoder()
        try log.readAuditFrames { frame in
            try frame.forEachEvent { index, bytes in
                guard EncodedEvent(bytes).isAudit else { return }
                if let event = try decoder.decode(bytes, index: index) { try body(index, event) }
            }
        }
    }

    /// Calls `body` with every event of the log, in order.
    public func forEachEvent(_ body: (UInt64, VaultEvent) throws -> Void) throws {
        try forEachEvent(where: { _ in true }, body)
    }

    /// Decodes and passes on the events whose encoded bytes `include` accepts.
    private func forEachEvent(where include: (UnsafeRawBufferPointer) -> Bool, _ body: (UInt64, VaultEvent) throws -> Void) throws {
        var decoders = KeyScopedTables.Decoders()
        var reader = try log.reader()
        while let frame = try reader.next() {
            let decoder = decoders.decoder(for: frame)
            try frame.forEachEvent { index, bytes in
                guard include(bytes) else { return }
                if let event = try decoder.decode(bytes, index: index) { try body(index, event) }
            }
        }
    }

    /// The interned strings and sources of each data key, read as commands need them.
    private(set) lazy var tables = KeyScopedTables(log: log)

    /// The read models and the log position they reflect, once loaded.
    var cachedProjections: (models: ReadModels, position: LogPosition)?
    /// Whether `importFiles` brings the read models up to date (feeding them as it appends,
    /// `ImportReadModelFeed`, or catching them up after its commit); tests turn it off to stand
    /// for a process that died between the log's commit and theirs.
    var feedsReadModelsDuringImport = true
    /// Whether the last `importFiles` brought the read models up to date itself (false: they
    /// catch up from the log, as after a crash).
    var importFedReadModels = false

    /// Why the read models were last rebuilt instead of loaded, for a warning; nil when they
    /// loaded normally.
    public internal(set) var projectionNotice: String?

    /// Slots of the in-memory identity table an import may use (8 bytes each) before it
    /// deduplicates through sealed scratch files instead. Tests lower it to exercise that path.
    var importIdentityBudgetSlots = 1 << 20

    /// Committed companion samples an import remembers for the upsert rule before it forgets
    /// them and reads again. Tests lower it.
    var importRevisionBudget = 400_000

    /// Reads the whole log, in order (a rebuild): each event's bytes, with its index and the
    /// decoder of its key, which `body` decodes them with (definitions included, so that the
    /// decoder learns them). Returns the position read up to.
    func scanLog(_ body: (EventDecoder, UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> LogPosition {
        var decoders = KeyScopedTables.Decoders()
        var reader = try log.reader()
        while let frame = try reader.next() {
            let decoder = decoders.decoder(for: frame)
            try frame.forEachEvent { index, bytes in try body(decoder, index, bytes) }
        }
        return reader.position
    }

    /// What a writer does after the log opened: finish an erasure a crash interrupted, and record
    /// in the audit trail a torn tail the log cut (after keeping its bytes aside), so that no cut
    /// is silent.
    func finishOpeningForWriting(now: Date = Date()) throws {
        try finishInterruptedErasure()
        if let torn = log.tornTail, let keptAs = torn.keptAs, let digest = torn.digest {
            try append([.tailCut(TailCutRecord(at: now, offset: torn.offset, length: torn.length, digest: digest.hex, keptAs: keptAs))])
        }
    }

    /// The last committed position of the log.
    public var committed: LogPosition { log.committed }

    /// What opening found at the end of the log (cut away when opened for writing).
    public var tornTail: TornTail? { log.tornTail }

    static func randomVaultID() -> [UInt8] { RandomBytes.make(16) }
}

@available(*, unavailable)
extension Vault: Sendable {}

extension Vault {
    /// Whether a command opens the vault to read or to write.
    public typealias AccessMode = EventLog.AccessMode
}
