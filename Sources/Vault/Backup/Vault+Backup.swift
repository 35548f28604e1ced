import EventLog
import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// What one `backup` run did.
public struct BackupRun: Sendable, Equatable {
    public var destination: String
    /// The events the backup holds (the vault's committed event count when the run read it).
    public var position: UInt64
    /// Bytes written to the destination by this run (log bytes and the small files).
    public var bytesWritten: UInt64
    /// Data keys the previous backup held that an erasure has destroyed since: this run removed
    /// them from the destination.
    public var erasuresApplied: Int
    /// Whether the log was copied whole (a first run, or one after a re-key rewrote the log).
    public var copiedWhole: Bool
    /// Records of runs made without the passphrase that no key of the vault opened, dropped when
    /// this run wrote the list (`Vault.backupRunsNotOpened`).
    public var recordsDropped: Int = 0
}

/// A destination the vault has backed up to (`backup list`).
public struct BackupDestinationRow: Sendable, Equatable {
    public var destination: String
    public var lastRun: Date
    public var position: UInt64
    public var bytes: UInt64
    /// Whether the backup still holds keys of months erased since its last run.
    public var holdsErasedKeys: Bool
}

extension Vault {
    /// Copies the vault's committed state into `destination` (docs/backup.md): the first run copies
    /// the log whole, later ones the frames after the backup's position, and the small files into
    /// a new state that one rename commits. Only ciphertext leaves; nothing of the vault is locked.
    @discardableResult
    public func backup(to destination: String, now: Date = Date()) throws -> BackupRun {
        let path = try Self.backupPath(destination, of: directory)
        let dest = BackupDestination(path: path, fileSystem: fileSystem)
        if try !dest.check(vaultID: log.vaultID) {
            // A destination backed up to before that holds no backup now: most likely the disk is
            // not mounted and this is its empty mount point's folder on the internal disk.
            let known = try backupRegistry()
            if !fileSystem.exists(path), known.entries.contains(where: { $0.path == path }) { throw BackupError.backupMissing(path: path) }
            try Self.startBackup(at: dest, vaultID: log.vaultID)
        }
        let copy = try Self.copyCommittedState(of: directory, vaultID: log.vaultID, masterKey: masterKey, into: dest)
        var dropped = 0
        let erasures = try updateRegistry(path: path, dropped: &dropped) { registry in
            // What the previous backup held: its key table opened, else what the list says.
            let before = copy.previousKeyTable.flatMap { try? EventLog.liveKeys(ofKeyTable: $0, vaultID: log.vaultID, masterKey: masterKey, path: path) }
                ?? registry.entries.first { $0.path == path }?.liveKeys
                ?? []
            registry.entries.removeAll { $0.path == path }
            registry.entries.append(BackupRegistry.Entry(path: path, lastRun: Int64((now.timeIntervalSince1970 * 1000).rounded()),
                                                         eventCount: copy.position.eventCount, offset: copy.position.offset,
                                                         bytes: (try? dest.size()) ?? 0, liveKeys: copy.liveKeys))
            // What the previous backup held that this run's key table no longer holds live: by id, or
            // by label when a re-key gave every key a new id since.
            let nowIDs = Set(copy.liveKeys.map(\.id)), nowLabels = Set(copy.liveKeys.map(\.label))
            let renumbered = !before.isEmpty && before.allSatisfy { !nowIDs.contains($0.id) }
            return before.filter { renumbered ? !nowLabels.contains($0.label) : !nowIDs.contains($0.id) }.count
        }
        return BackupRun(destination: path, position: copy.position.eventCount, bytesWritten: copy.written, erasuresApplied: erasures,
                         copiedWhole: copy.copiedWhole, recordsDropped: dropped)
    }

    /// `destination` made absolute, refused when it is the vault or inside it (or the reverse).
    static func backupPath(_ destination: String, of directory: String) throws -> String {
        let path = absolute(destination)
        let vaultPath = absolute(directory)
        guard path != vaultPath, !path.hasPrefix(vaultPath + "/"), !vaultPath.hasPrefix(path + "/") else {
            throw BackupError.insideVault(path: path)
        }
        return path
    }

    /// Makes `dest` a backup of the vault: its folder (only inside one that exists: an unplugged
    /// disk's mount point is not written to) and its marker.
    static func startBackup(at dest: BackupDestination, vaultID: [UInt8]) throws {
        let fileSystem = dest.fileSystem, path = dest.path
        guard fileSystem.exists(directoryName(of: path)) else {
            throw BackupError.cannotWrite(path: path, reason: "its folder \(directoryName(of: path)) does not exist: is the disk mounted?")
        }
        try writing(path) {
            if !fileSystem.exists(path) {
                try fileSystem.createDirectory(path)
                try fileSystem.syncDirectory(directoryName(of: path))
            }
            try fileSystem.replaceAtomically(dest.file(BackupDestination.markerName), with: BackupDestination.marker(vaultID: vaultID))
        }
    }

    /// A run stopped by `copyCommittedState`'s `refusal`, before it wrote anything.
    struct BackupCopyRefused: Error {
        var reason: String
    }

    /// What one run copied.
    struct BackupCopy {
        var position: LogPosition
        var written: UInt64
        var copiedWhole: Bool
        /// The key table the destination's previous state held, and the one this run copied.
        var previousKeyTable: [UInt8]?
        var keyTable: [UInt8]?
        /// The copied table's live keys (empty without the master key, which opens it).
        var liveKeys: [LiveKey]
    }

    /// Copies the committed state of the vault at `directory` into `dest` (a backup of it, its
    /// marker in place), holding the destination's lock: the log from where the backup's ended
    /// (whole when that is not the vault's), a new state of the small files, `CURRENT` renamed
    /// over, and what no state names removed. Without `masterKey` nothing read is authenticated
    /// (`backup verify` and `restore` are what authenticate a backup).
    ///
    /// `refusal` sees the previous state's key table and the vault's, under the lock and before
    /// anything is written: a reason it returns stops the run (`BackupCopyRefused`).
    static func copyCommittedState(of directory: String, vaultID: [UInt8], masterKey: SecretKey?, into dest: BackupDestination,
                                   refusal: (_ previousKeyTable: [UInt8]?, _ keyTable: [UInt8]?) -> String? = { _, _ in nil }) throws -> BackupCopy {
        let fileSystem = dest.fileSystem, path = dest.path
        let lock = try writing(path) { try fileSystem.open(dest.file(BackupDestination.lockName), mode: .createIfMissing) }
        guard try lock.tryLockExclusive() else { throw BackupError.busy(path: path) }
        defer { try? lock.unlock() }

        let source = try committedSnapshot(of: directory, masterKey: masterKey, fileSystem: fileSystem)
        guard source.log.vaultID == vaultID else { throw BackupError.otherVault(path: directory) }
        let previous = try dest.current()
        let previousFiles = try previous.map { try dest.stateContents($0) }
        if let reason = refusal(previousFiles?["keys.sealed"], source.files["keys.sealed"]) { throw BackupCopyRefused(reason: reason) }
        // The log goes on where the backup's ended when its last frame is the vault's, byte for byte
        // (the frame's chain hash covers every frame before it); else it is copied whole.
        var from: UInt64 = 0
        var logNumber = (previous?.logNumber ?? 0) + 1
        let previousHead = previous.flatMap { state in
            previousFiles?["events.head"].flatMap { try? EventLog.headPosition(of: $0, masterKey: masterKey, path: dest.stateFile(state, "events.head")) }
        }
        // Under one master key a vault's events only grow: a backup that holds more than the vault
        // is of a later state (the vault was restored from an older copy, or rolled back). It is
        // not overwritten by the older one.
        if let previousHead, previousHead.position.eventCount > source.log.position.eventCount {
            throw BackupError.backupAhead(path: path, backup: previousHead.position.eventCount, vault: source.log.position.eventCount)
        }
        if let previous, let (position, lastFrame) = previousHead,
           position.offset <= source.log.position.offset, fileSystem.exists(dest.file(previous.logName)) {
            let backupLog = try fileSystem.open(dest.file(previous.logName), mode: .readOnly)
            let count = Int(position.offset - lastFrame)
            if try backupLog.size() >= position.offset,
               try backupLog.readBytes(at: lastFrame, count: count) == source.log.log.readBytes(at: lastFrame, count: count) {
                from = position.offset
                logNumber = previous.logNumber
            }
        }
        let state = BackupDestination.State(number: (previous?.number ?? 0) + 1, logNumber: logNumber)
        var written: UInt64 = 0
        var committed = false
        let target = dest.file(state.logName)
        do {
            try writing(path) {
                if from == 0, fileSystem.exists(target) { try fileSystem.remove(target) }
                let out = try fileSystem.open(target, mode: .createIfMissing)
                // Bytes past the backup's position are an unfinished run's.
                try out.truncate(to: from)
                written += try copy(from: source.log.log, range: from..<source.log.position.offset, to: out)
                try out.sync()
                if from == 0 { try fileSystem.syncDirectory(path) }
                try dest.writeState(state, files: source.files)
                written += source.files.values.reduce(0) { $0 + UInt64($1.count) }
                // The commit point, the rename: a run killed before it leaves the previous backup as it was.
                let current = dest.file(BackupDestination.currentName)
                try fileSystem.remove(current + ".tmp")
                let file = try fileSystem.open(current + ".tmp", mode: .createNew)
                try Array(state.line.utf8).withUnsafeBytes { try file.write(at: 0, $0) }
                try file.fullSync()
                try fileSystem.rename(current + ".tmp", to: current)
                committed = true
                try fileSystem.syncDirectory(path)
                written += UInt64(state.line.utf8.count)
                try dest.removeLeftovers(keeping: state)
            }
        } catch where !committed {
            // A failed run (a full or read-only disk) takes back what it wrote, where it still can;
            // what it cannot is past the backup's position and removed by the next run.
            try? dest.removeState(dest.file(state.stateDirectory))
            if from == 0 { try? fileSystem.remove(target) } else { try? fileSystem.open(target, mode: .readWrite).truncate(to: from) }
            try? fileSystem.remove(dest.file(BackupDestination.currentName) + ".tmp")
            throw error
        }
        return BackupCopy(position: source.log.position, written: written, copiedWhole: from == 0, previousKeyTable: previousFiles?["keys.sealed"],
                          keyTable: source.files["keys.sealed"], liveKeys: source.log.liveKeys)
    }

    /// What changes with every commit to the vault at `directory`, read without the passphrase (the
    /// head record's bytes): `serve --backup` ships when it changed. Nil when it cannot be read.
    public static func commitMark(at directory: String) -> [UInt8]? {
        try? POSIXFileSystem().readFileIfPresent(directory + "/events.head", limit: 4096)
    }

    /// Every destination backed up to, with whether it still holds keys of months erased since.
    public func backupDestinations() throws -> [BackupDestinationRow] {
        let registry = try backupRegistry()
        let keys = log.dataKeys
        return registry.entries.sorted { $0.path < $1.path }.map { entry in
            BackupDestinationRow(destination: entry.path, lastRun: Date(timeIntervalSince1970: Double(entry.lastRun) / 1000),
                                 position: entry.eventCount, bytes: entry.bytes,
                                 holdsErasedKeys: !BackupRegistry.erased(of: entry.liveKeys, vaultKeys: keys).isEmpty)
        }
    }

    /// Records of runs made without the passphrase that no key of this vault opens (`backups.pub`
    /// altered, or records a re-key that crashed after its commit left under the old key): the runs
    /// they stand for are not in the list until the next run with the key to each destination.
    public func backupRunsNotOpened() throws -> Int {
        try PendingBackupRuns.read(in: directory, vaultID: log.vaultID, masterKey: masterKey, fileSystem: fileSystem).unreadable
    }

    /// The list of destinations with the runs made without the passphrase in it
    /// (`PendingBackupRuns`).
    func backupRegistry() throws -> BackupRegistry { try backupRegistryAndRecordsNotOpened().registry }

    /// `backupRegistry()`, and how many records no key opened (`backupRunsNotOpened()`), from one
    /// reading of the records.
    private func backupRegistryAndRecordsNotOpened() throws -> (registry: BackupRegistry, notOpened: Int) {
        var registry = try BackupRegistry.read(in: directory, vaultID: log.vaultID, masterKey: masterKey, fileSystem: fileSystem)
        let pending = try PendingBackupRuns.read(in: directory, vaultID: log.vaultID, masterKey: masterKey, fileSystem: fileSystem)
        guard !pending.runs.isEmpty else { return (registry, pending.unreadable) }
        // The table on disk now (a handle open for long, `serve`'s, may not have seen the latest),
        // its keys and digest from the same bytes.
        let path = directory + "/keys.sealed"
        if let table = try fileSystem.readFileIfPresent(path, limit: 64 << 20) {
            let keys = try EventLog.dataKeys(ofKeyTable: table, vaultID: log.vaultID, masterKey: masterKey, path: path)
            registry.merge(pending.runs, tableKeys: keys, tableDigest: EventLog.digest(ofKeyTable: table))
        } else {
            registry.merge(pending.runs, tableKeys: log.dataKeys, tableDigest: nil)
        }
        return (registry, pending.unreadable)
    }

    /// The files a backup takes, consistent with one another: the log's committed state and the
    /// keyslot, identity and server credentials of the same moment (a re-key, which moves them
    /// all, makes it read again).
    static func committedSnapshot(of directory: String, masterKey: SecretKey?, fileSystem: any FileSystem) throws -> (log: CommittedFiles, files: [String: [UInt8]]) {
        let names = BackupDestination.stateFiles.filter { !["events.head", "keys.sealed"].contains($0) }
        var lastProblem: Error = BackupError.damaged(path: directory, reason: "changed while it was read")
        for attempt in 0..<20 {
            if attempt > 0 { usleep(50_000) }
            func smallFiles() throws -> [String: [UInt8]] {
                var files: [String: [UInt8]] = [:]
                for name in names { files[name] = try fileSystem.readFileIfPresent(directory + "/" + name, limit: 64 << 20) }
                return files
            }
            do {
                let before = try smallFiles()
                let committed = try EventLog.committedFiles(in: directory, masterKey: masterKey, fileSystem: fileSystem)
                let after = try smallFiles()
                let head = try fileSystem.readFileIfPresent(directory + "/events.head", limit: 4096)
                guard before == after, head == committed.head, !fileSystem.exists(directory + "/" + rekeyCommitted) else { continue }
                var files = after
                files["events.head"] = committed.head
                files["keys.sealed"] = committed.keyTable
                return (committed, files)
            } catch {
                lastProblem = error
            }
        }
        throw lastProblem
    }

    /// Reads, changes and writes the list of destinations under its own lock (backups to two
    /// destinations may run at once); the runs made without the passphrase go into it, and their
    /// records with it, and `backups.pub` is put right when it is not this key's.
    private func updateRegistry<T>(path: String, dropped: inout Int, _ change: (inout BackupRegistry) throws -> T) throws -> T {
        try Self.holdingRegistryLock(in: directory, fileSystem: fileSystem) {
            var (registry, notOpened) = try backupRegistryAndRecordsNotOpened()
            dropped = notOpened
            let result = try change(&registry)
            try registry.write(in: directory, log: log, masterKey: masterKey, fileSystem: fileSystem)
            try PendingBackupRuns.remove(in: directory, fileSystem: fileSystem)
            try PendingBackupRuns.writePublicKey(in: directory, vaultID: log.vaultID, masterKey: masterKey, fileSystem: fileSystem)
            return result
        }
    }

    /// Runs `body` holding the list of destinations' lock (`backups.sealed.lock`), which a run
    /// holds while it records itself and a re-key while it seals the list again: neither loses
    /// what the other wrote. Waits up to two seconds (a run holds it for a moment).
    static func holdingRegistryLock<T>(in directory: String, fileSystem: any FileSystem, _ body: () throws -> T) throws -> T {
        let lock = try fileSystem.open(directory + "/" + BackupRegistry.fileName + ".lock", mode: .createIfMissing)
        guard try waitForLock(lock, attempts: 400) else { throw BackupError.busy(path: directory + "/" + BackupRegistry.fileName) }
        defer { try? lock.unlock() }
        return try body()
    }

    /// Tries `lock` every 5 ms, `attempts` times; whether it is held.
    static func waitForLock(_ lock: any StorageFile, attempts: Int) throws -> Bool {
        for attempt in 0..<attempts {
            if try lock.tryLockExclusive() { return true }
            if attempt + 1 < attempts { usleep(5_000) }
        }
        return false
    }

    /// Copies `range` of `source` to the same offsets of `target`: in the kernel, else a few MiB at a time.
    static func copy(from source: any StorageFile, range: Range<UInt64>, to target: any StorageFile) throws -> UInt64 {
        // In the kernel where it can (as cp does): writing 4 MiB at a time from this process's
        // memory made the kernel throttle the writes, 15 ms a chunk (docs/benchmarks.md, "Backups").
        if try source.copyInKernel(range, to: target) { return range.upperBound - range.lowerBound }
        var offset = range.lowerBound
        let chunk = 4 << 20
        var buffer = [UInt8](repeating: 0, count: chunk)
        while offset < range.upperBound {
            let want = Int(min(UInt64(chunk), range.upperBound - offset))
            let got = try buffer.withUnsafeMutableBytes { try source.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want])) }
            guard got == want else { throw BackupError.damaged(path: "events.log", reason: "ended before its head record's position") }
            try buffer.withUnsafeBytes { try target.write(at: offset, UnsafeRawBufferPointer(rebasing: $0[..<want])) }
            offset += UInt64(want)
        }
        return range.upperBound - range.lowerBound
    }

    /// Runs `body`, naming the destination in what a failed write says (a full disk, a read-only
    /// or unplugged one).
    static func writing<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch StorageError.io(let operation, let file, let errno) {
            throw BackupError.cannotWrite(path: path, reason: "\(operation) \(file): \(systemErrorMessage(errno))")
        } catch StorageError.notFound(let file) {
            // A file of the run gone under it: the disk was unplugged, or someone removed it.
            throw BackupError.cannotWrite(path: path, reason: "\(file): \(systemErrorMessage(ENOENT))")
        } catch StorageError.alreadyExists(let file) {
            throw BackupError.cannotWrite(path: path, reason: "\(file): \(systemErrorMessage(EEXIST))")
        }
    }

    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
