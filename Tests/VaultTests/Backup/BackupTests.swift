@testable import EventLog
import Foundation
@testable import HealthModel
import ResearchBundle
import SyntheticHealth
import Testing
@testable import Vault
import VaultTestSupport

/// Backups (issue 37): a restore equals the original at the backup's position; a later run copies
/// only the new frames; an erasure reaches the backup at its next run, tried the way an attacker
/// with the backup and the passphrase would; a run that fails at any step, or on a full or
/// read-only disk, leaves the previous backup whole.
@Suite struct BackupTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// The vault's answers that a restore must repeat, as text.
    static func answers(_ vault: Vault) throws -> [String] {
        var out = try vault.heldTypes().map { "\($0.type) \($0.count) \($0.first?.description ?? "-") \($0.last?.description ?? "-")" }
        out += try vault.summary(metric: "steps", by: .day).map { "steps \($0.period) \($0.value)" }
        out += try vault.summary(metric: "heart-rate", by: .week).map { "hr \($0.period) \($0.value) \($0.min ?? -1) \($0.max ?? -1)" }
        out += try vault.rings().map { "\($0.day) \($0.move) \($0.exercise) \($0.stand)" }
        out += try vault.consentLedger().recipients.keys.sorted()
        out += try vault.history().map { "\($0.index) \($0.event.kind)" }
        out += try vault.trainingStats(by: .month).map { "\($0.period) \($0.sets) \($0.workouts)" }
        return out
    }

    @Test func aRestoreOfAGeneratedYearAnswersAsTheOriginal() throws {
        let t = try ImportTestVault()
        let zip = t.dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 365, firstDay: (2023, 1, 1), tripStart: 100))
        _ = try t.vault.importFiles([zip])
        try t.vault.practice(name: "push-ups", repetitions: 20, seconds: 60, at: LocalTime.parse("2023-06-01 08:00", timeZone: Self.berlin)!)
        try RecipientKeyFiles.generate(prefix: t.dir.path + "/lab")
        try t.vault.addRecipient(name: "lab", publicKeyFile: t.dir.path + "/lab.pub")
        let destination = t.dir.path + "/backup"
        let run = try t.vault.backup(to: destination)
        #expect(run.copiedWhole && run.position == t.vault.log.committed.eventCount)
        let restored = t.dir.path + "/restored"
        let report = try Vault.restore(from: destination, to: restored, passphrase: passphrase("p"))
        #expect(report.isOK && report.events == run.position, "\(report.problems)")
        let copy = try Vault.open(at: restored, passphrase: passphrase("p"))
        #expect(try Self.answers(copy) == Self.answers(t.vault))
        // A restore refuses a directory with something in it, and says so.
        #expect(throws: BackupError.targetNotEmpty(path: restored)) {
            try Vault.restore(from: destination, to: restored, passphrase: passphrase("p"))
        }
    }

    @Test func aLaterRunCopiesOnlyTheNewFramesAndTheSmallFiles() throws {
        let t = try ImportTestVault()
        let zip = t.dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 30, firstDay: (2024, 1, 1), tripStart: 100))
        _ = try t.vault.importFiles([zip])
        let destination = t.dir.path + "/backup"
        try t.vault.backup(to: destination)
        let before = t.vault.log.committed.offset
        try t.vault.practice(name: "squats", repetitions: 15, seconds: nil, at: LocalTime.parse("2024-01-20 08:00", timeZone: Self.berlin)!)
        let newFrames = t.vault.log.committed.offset - before
        let small = try ["keyslot", "events.head", "keys.sealed", "identity.sealed"].reduce(UInt64(0)) {
            $0 + (try FileManager.default.attributesOfItem(atPath: t.path + "/" + $1)[.size] as! UInt64)
        }
        let run = try t.vault.backup(to: destination)
        #expect(!run.copiedWhole)
        #expect(run.bytesWritten <= 2 * newFrames + small + 64, "\(run.bytesWritten) bytes for \(newFrames) bytes of frames and \(small) of small files")
        // The backup's log is the vault's, byte for byte, to the position.
        let current = try #require(try BackupDestination(path: destination, fileSystem: POSIXFileSystem()).current())
        let copied = try Data(contentsOf: URL(fileURLWithPath: destination + "/" + current.logName))
        let original = try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log")).prefix(Int(t.vault.log.committed.offset))
        #expect(copied == original)
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).isOK)
    }

    /// After an erase and a run, every frame of the backup whose key was destroyed is tried with
    /// every key the backup holds (its key table's live keys and the audit key) and none opens;
    /// no file of the backup holds the key table of before; the rest of the log is byte-identical.
    @Test func anErasureReachesTheBackupAtItsNextRun() throws {
        let t = try ImportTestVault()
        let zip = t.dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 60, firstDay: (2024, 1, 1), tripStart: 100))
        _ = try t.vault.importFiles([zip])
        let destination = t.dir.path + "/backup"
        try t.vault.backup(to: destination)
        let dest = BackupDestination(path: destination, fileSystem: POSIXFileSystem())
        let oldTable = try Data(contentsOf: URL(fileURLWithPath: destination + "/" + (try #require(try dest.current())).stateDirectory + "/keys.sealed"))
        let january = DataLabel(category: .heart, month: LocalMonth(year: 2024, month: 1)).bytes
        #expect(try EventLog.liveKeys(ofKeyTable: Array(oldTable), vaultID: t.vault.log.vaultID, masterKey: t.vault.masterKey, path: "old").contains { $0.label == january })

        _ = try t.vault.erase(categories: [.heart], from: LocalMonth(year: 2024, month: 1), to: LocalMonth(year: 2024, month: 1))
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [true])
        let run = try t.vault.backup(to: destination)
        #expect(run.erasuresApplied == 1 && !run.copiedWhole)
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [false])

        // No file of the backup holds the old table's bytes (nor its start: the zeroed copy is gone).
        let current = try #require(try dest.current())
        for name in try FileManager.default.subpathsOfDirectory(atPath: destination) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: destination + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: destination + "/" + name))
            #expect(bytes.range(of: oldTable.subdata(in: 64..<min(oldTable.count, 256))) == nil, "\(name) holds the old key table")
        }
        // Every erased frame tried with every key the backup holds.
        let tableBytes = Array(try Data(contentsOf: URL(fileURLWithPath: destination + "/" + current.stateDirectory + "/keys.sealed")))
        let keyring = LogKeyring(masterKey: t.vault.masterKey)
        let table = try KeyTable.open(tableBytes, vaultID: t.vault.log.vaultID, tableKey: keyring.tableKey, path: "backup")
        let keys = table.entries.compactMap(\.key) + [keyring.frameKeys[LogFormat.auditKeyID]!]
        let erasedIDs = Set(table.entries.filter { $0.key == nil }.map(\.id))
        #expect(!erasedIDs.isEmpty && !table.entries.contains { $0.key != nil && $0.label == january })
        let log = try POSIXFileSystem().open(destination + "/" + current.logName, mode: .readOnly)
        let reader = FrameReader(file: log, path: "backup", vaultID: t.vault.log.vaultID, keyring: keyring)
        var offset = UInt64(LogFormat.fileHeaderSize), tried = 0
        let size = try log.size()
        while offset < size, case .success(let located) = try reader.readHeader(at: offset, fileSize: size) {
            if erasedIDs.contains(located.header.keyID) {
                let payload = try log.readBytes(at: offset + UInt64(LogFormat.frameHeaderSize), count: Int(located.header.payloadLength))
                var output = [UInt8](repeating: 0, count: payload.count - LogFormat.tagSize)
                for key in keys {
                    let opened = payload.withUnsafeBytes { ciphertext in
                        located.bytes.withUnsafeBytes { header in
                            located.header.nonce.withUnsafeBytes { nonce in
                                output.withUnsafeMutableBytes { out in
                                    FrameCipher.open(ciphertext, header: UnsafeRawBufferPointer(rebasing: header.prefix(LogFormat.frameHeaderAuthenticatedSize)),
                                                     nonce: nonce, key: key, into: out)
                                }
                            }
                        }
                    }
                    #expect(!opened, "an erased frame at \(offset) opened with a key the backup holds")
                    tried += 1
                }
            }
            offset = located.end
        }
        #expect(offset == t.vault.log.committed.offset && tried > 0)
        // The rest is the vault's log, byte for byte; the backup, opened, holds no January heart rate.
        let copied = try Data(contentsOf: URL(fileURLWithPath: destination + "/" + current.logName))
        #expect(copied == (try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log"))).prefix(Int(t.vault.log.committed.offset)))
        let restored = t.dir.path + "/restored"
        try Vault.restore(from: destination, to: restored, passphrase: passphrase("p"))
        let months = try Vault.open(at: restored, passphrase: passphrase("p")).summary(metric: "heart-rate", by: .month).map(\.period)
        #expect(months == ["2024-02"])
    }

    /// A vault with one squat logged at `path`, backed up to `destination`, and closed: the
    /// writer's lock goes with its handle, before a re-key takes it.
    private func backedUpVaultClosed(at path: String, to destination: String) throws {
        let vault = try makeVault(at: path, passphrase: "p")
        try vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        try vault.backup(to: destination)
    }

    /// After `passwd --rekey` the list of destinations is still known (sealed again), and the next
    /// run rewrites the backup whole under the new key: the old log file goes, the new passphrase
    /// opens it, the old one no longer does.
    @Test func aRekeyedVaultIsBackedUpWholeAtTheNextRun() throws {
        let dir = TemporaryDirectory("backup-rekey")
        let path = dir.path + "/v", destination = dir.path + "/backup"
        try backedUpVaultClosed(at: path, to: destination)
        try Vault.rekey(at: path, from: passphrase("p"), to: passphrase("q"), kdf: KDFPreset.interactive.parameters)
        let vault = try Vault.open(at: path, passphrase: passphrase("q"))
        #expect(try vault.backupDestinations().map(\.destination) == [destination])
        let run = try vault.backup(to: destination)
        #expect(run.copiedWhole)
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).filter { $0.hasPrefix("events-") } == ["events-2.log"])
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("q")).events == vault.log.committed.eventCount)
        #expect(throws: EventLogError.wrongPassphrase) { try Vault.verifyBackup(at: destination, passphrase: passphrase("p")) }
    }

    /// A month erased and then imported again (`--allow-erased`) has a new key under the same
    /// label: the backup still holds the destroyed one, and says so until its next run.
    @Test func aMonthImportedAgainAfterItsErasureStillFlagsTheBackup() throws {
        let t = try ImportTestVault()
        let zip = t.dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 20, firstDay: (2024, 1, 1), tripStart: 100))
        _ = try t.vault.importFiles([zip])
        let destination = t.dir.path + "/backup"
        try t.vault.backup(to: destination)
        _ = try t.vault.erase(categories: [.heart], from: LocalMonth(year: 2024, month: 1), to: LocalMonth(year: 2024, month: 1))
        _ = try t.vault.importFiles([zip], allowErased: true)
        #expect(try t.vault.summary(metric: "heart-rate", by: .month).map(\.period) == ["2024-01"])
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [true])
        let run = try t.vault.backup(to: destination)
        #expect(run.erasuresApplied == 1)
        #expect(try t.vault.backupDestinations().map(\.holdsErasedKeys) == [false])
    }

    /// The run crashed at every one of its steps: the previous backup verifies and restores to
    /// its own position, and the next run completes.
    @Test func aRunCrashedAtAnyStepLeavesThePreviousBackupWhole() throws {
        let t = try ImportTestVault()
        let destination = t.dir.path + "/backup"
        try Self.crashEveryStep(of: t, destination: destination, first: { try t.vault.backup(to: destination) }) { faults in
            try Vault.open(at: t.path, passphrase: passphrase("p"), fileSystem: faults).backup(to: destination)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: destination).filter { $0.hasPrefix("state-") || $0.hasSuffix(".tmp") }
        #expect(leftovers.count == 1, "\(leftovers)")
    }

    /// A squat logged, `first` backs it up, a second squat logged; then `run` is crashed at every
    /// one of its steps (a file system failing its k-th operation, k = 0, 1, ...) until it
    /// completes: after each crash the backup verifies, at the first position or the new one and
    /// nothing between, and in the end it holds every event.
    static func crashEveryStep(of t: ImportTestVault, destination: String, first: () throws -> Void,
                               run: (FaultInjectingFileSystem) throws -> Void) throws {
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: berlin)!)
        try first()
        let firstPosition = t.vault.log.committed.eventCount
        try t.vault.practice(name: "squats", repetitions: 12, seconds: nil, at: LocalTime.parse("2024-01-11 08:00", timeZone: berlin)!)
        var step = 0, crashes = 0
        while true {
            let faults = FaultInjectingFileSystem(failAt: step)
            do {
                try run(faults)
                break
            } catch {
                crashes += 1
            }
            let report = try Vault.verifyBackup(at: destination, passphrase: passphrase("p"))
            #expect(report.isOK, "crash at step \(step) (\(faults.journal.last ?? "")): \(report.problems)")
            // Before the commit point the previous backup, after it the new one: nothing between.
            #expect(report.events == firstPosition || report.events == t.vault.log.committed.eventCount, "crash at step \(step)")
            step += 1
        }
        #expect(crashes > 10)
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).events == t.vault.log.committed.eventCount)
    }

    /// The process dies at every step of a run and the power goes: what was not synced is undone
    /// (every unsynced write, or a random half of them: the disk kept some out of order). An
    /// acknowledged run survives; any other leaves the previous backup or the new one, whole.
    @Test func aRunWithPowerLostAtEveryStepLeavesAWholeBackup() throws {
        let seed = TestSeed()
        var random = seed.generator
        let t = try ImportTestVault()
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        let destination = t.dir.path + "/backup"
        try t.vault.backup(to: destination)
        // Each step starts from this first backup, as it was.
        let pristine = t.dir.path + "/backup-first"
        try FileManager.default.copyItem(atPath: destination, toPath: pristine)
        let first = t.vault.log.committed.eventCount
        try t.vault.practice(name: "squats", repetitions: 12, seconds: nil, at: LocalTime.parse("2024-01-11 08:00", timeZone: Self.berlin)!)
        let second = t.vault.log.committed.eventCount
        var step = 0, completed = false
        while !completed {
            try FileManager.default.removeItem(atPath: destination)
            try FileManager.default.copyItem(atPath: pristine, toPath: destination)
            let disk = PowerLossFileSystem(failAt: step)
            var acknowledged = false
            do {
                try Vault.open(at: t.path, passphrase: passphrase("p"), fileSystem: disk).backup(to: destination)
                acknowledged = true
                completed = !disk.died
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower { _ in random.next(2) == 0 }
            let report = try Vault.verifyBackup(at: destination, passphrase: passphrase("p"))
            #expect(report.isOK && [first, second].contains(report.events), "power lost at step \(step), \(seed): \(report.problems)")
            if acknowledged { #expect(report.events == second, "an acknowledged backup was undone by power loss at step \(step), \(seed)") }
            step += 1
        }
        #expect(step > 10)
    }

    /// What a person meets around a backup: a first run killed before its marker was in place is
    /// taken up again; a backup of a later state than the vault's (the vault put back from an older
    /// copy) is refused, not overwritten; a destination backed up to before that is gone (a disk
    /// not mounted) is refused, not made anew on the internal disk.
    @Test func aKilledFirstRunResumesAndALaterOrMissingBackupIsRefused() throws {
        let t = try ImportTestVault()
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        let destination = t.dir.path + "/backup"
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: destination + "/HEALTHVAULT-BACKUP.tmp", contents: Data([0x48])))
        #expect(FileManager.default.createFile(atPath: destination + "/backup.lock", contents: nil))
        try t.vault.backup(to: destination)
        #expect(!FileManager.default.fileExists(atPath: destination + "/HEALTHVAULT-BACKUP.tmp"))

        let older = t.dir.path + "/older"
        try FileManager.default.copyItem(atPath: t.path, toPath: older)
        try t.vault.practice(name: "squats", repetitions: 12, seconds: nil, at: LocalTime.parse("2024-01-11 08:00", timeZone: Self.berlin)!)
        try t.vault.backup(to: destination)
        let before = try FileManager.default.subpathsOfDirectory(atPath: destination).sorted()
        let later = t.vault.log.committed.eventCount
        #expect(throws: BackupError.backupAhead(path: destination, backup: later, vault: later - 1)) {
            try Vault.open(at: older, passphrase: passphrase("p")).backup(to: destination)
        }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: destination).sorted() == before)
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).events == later)

        try FileManager.default.moveItem(atPath: destination, toPath: t.dir.path + "/unplugged")
        #expect(throws: BackupError.backupMissing(path: destination)) { try t.vault.backup(to: destination) }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    /// A full disk and a read-only one: one error naming the destination and saying the previous
    /// backup stands, and the backup's files as they were.
    @Test func aFullOrReadOnlyDestinationChangesNothing() throws {
        let t = try ImportTestVault()
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: LocalTime.parse("2024-01-10 08:00", timeZone: Self.berlin)!)
        let destination = t.dir.path + "/backup"
        try t.vault.backup(to: destination)
        try t.vault.practice(name: "squats", repetitions: 12, seconds: nil, at: LocalTime.parse("2024-01-11 08:00", timeZone: Self.berlin)!)
        func files() throws -> [String: Data] {
            var out: [String: Data] = [:]
            for name in try FileManager.default.subpathsOfDirectory(atPath: destination) where name != BackupDestination.lockName {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: destination + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue {
                    out[name] = try Data(contentsOf: URL(fileURLWithPath: destination + "/" + name))
                }
            }
            return out
        }
        let before = try files()
        for (errno, limit) in [(ENOSPC, 100), (EROFS, 0)] {
            let full = RefusingFileSystem(under: destination, errno: errno, afterBytes: limit)
            let vault = try Vault.open(at: t.path, passphrase: passphrase("p"), fileSystem: full)
            let error = #expect(throws: BackupError.self) { try vault.backup(to: destination) }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.hasPrefix("cannot write the backup to \(destination) (") && text.contains(String(cString: strerror(errno)))
                    && text.hasSuffix("the previous backup there is unchanged and the next run resumes"), "\(text)")
            #expect(try files() == before, "errno \(errno)")
        }
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).isOK)

        // The disk unplugged in the middle of the run: every file under it is gone. One line too;
        // what the run wrote past the backup's position is cut by the next run, once it is back.
        let gone = RefusingFileSystem(under: destination, errno: ENOENT, afterBytes: 100)
        let error = #expect(throws: BackupError.self) { try Vault.open(at: t.path, passphrase: passphrase("p"), fileSystem: gone).backup(to: destination) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.hasPrefix("cannot write the backup to \(destination) (") && text.contains(String(cString: strerror(ENOENT)))
                && text.hasSuffix("the previous backup there is unchanged and the next run resumes"), "\(text)")
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).isOK)
        let resumed = try t.vault.backup(to: destination)
        #expect(!resumed.copiedWhole)
        #expect(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).events == Int(resumed.position))
    }

    /// `backup verify` and `restore` wait for a run in progress (its lock) before they read the
    /// backup's state: a run replaces the state and removes the old one under a reader otherwise.
    /// A re-key waits likewise for a run recording itself in the list of destinations.
    @Test func verifyRestoreAndRekeyWaitForARunInProgress() throws {
        let dir = TemporaryDirectory("backup-wait")
        let path = dir.path + "/v", destination = dir.path + "/backup"
        try backedUpVaultClosed(at: path, to: destination)
        func whileHeld(_ lockPath: String, _ work: @escaping @Sendable () throws -> Void) throws -> (waited: Bool, error: String?) {
            let lock = try POSIXFileSystem().open(lockPath, mode: .createIfMissing)
            #expect(try lock.tryLockExclusive())
            let done = DispatchSemaphore(value: 0)
            let failure = LockedBox<String?>(nil)
            Thread {
                do { try work() } catch { failure.set("\(error)") }
                done.signal()
            }.start()
            let finishedWhileHeld = done.wait(timeout: .now() + 0.4) == .success
            try lock.unlock()
            if !finishedWhileHeld { done.wait() }
            return (!finishedWhileHeld, failure.get())
        }
        let lockPath = destination + "/" + BackupDestination.lockName
        let verified = LockedBox(false)
        var outcome = try whileHeld(lockPath) { verified.set(try Vault.verifyBackup(at: destination, passphrase: passphrase("p")).isOK) }
        #expect(outcome.waited && outcome.error == nil && verified.get())
        let restored = dir.path + "/restored"
        outcome = try whileHeld(lockPath) { try Vault.restore(from: destination, to: restored, passphrase: passphrase("p")) }
        #expect(outcome.waited && outcome.error == nil && FileManager.default.fileExists(atPath: restored + "/keyslot"))

        let registryLock = path + "/backups.sealed.lock"
        outcome = try whileHeld(registryLock) {
            try Vault.rekey(at: path, from: passphrase("p"), to: passphrase("q"), kdf: KDFParameters.minimumForTesting)
        }
        #expect(outcome.error == nil)
        #expect(outcome.waited)
        #expect(try Vault.open(at: path, passphrase: passphrase("q")).backupDestinations().map(\.destination) == [destination])
    }
}

/// A value two threads hand each other under a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ new: Value) { lock.withLock { value = new } }
}

/// A file system whose writes under one directory fail with `errno` once `afterBytes` bytes were
/// written there (ENOSPC: a disk that fills up; EROFS with 0: one mounted read-only, where
/// creating, renaming and removing fail too; ENOENT: a disk unplugged, every file under it gone
/// from then on).
final class RefusingFileSystem: FileSystem, @unchecked Sendable {
    let base = POSIXFileSystem()
    let prefix: String
    let errno: Int32
    let limit: Int
    private var written = 0
    private let lock = NSLock()

    init(under directory: String, errno: Int32, afterBytes: Int) {
        prefix = directory
        self.errno = errno
        limit = afterBytes
    }

    func inside(_ path: String) -> Bool { path == prefix || path.hasPrefix(prefix + "/") }
    private var gone = false
    func refuse(_ operation: String, _ path: String, bytes: Int = 0) throws {
        guard inside(path) else { return }
        try lock.withLock {
            if gone { throw StorageError.notFound(path: path) }
            if errno == EROFS || written + bytes > limit {
                if errno == ENOENT {
                    gone = true
                    throw StorageError.notFound(path: path)
                }
                throw StorageError.io(operation: operation, path: path, errno: errno)
            }
            written += bytes
        }
    }

    func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        if mode != .readOnly, errno == EROFS, inside(path), !path.hasSuffix(BackupDestination.lockName) { try refuse("open", path) }
        if errno == ENOENT, inside(path), lock.withLock({ gone }) { throw StorageError.notFound(path: path) }
        let file = try base.open(path, mode: mode)
        return inside(path) ? Refusing(file: file, path: path, owner: self) : file
    }
    func rename(_ source: String, to destination: String) throws { try refuse("rename", destination); try base.rename(source, to: destination) }
    func link(_ source: String, to destination: String) throws { try refuse("link", destination); try base.link(source, to: destination) }
    func remove(_ path: String) throws { if exists(path) { try refuse("unlink", path) }; try base.remove(path) }
    func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
    func createDirectory(_ path: String) throws { try refuse("mkdir", path); try base.createDirectory(path) }
    func removeDirectory(_ path: String) throws { if exists(path) { try refuse("rmdir", path) }; try base.removeDirectory(path) }
    func exists(_ path: String) -> Bool { base.exists(path) }
    func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }

    final class Refusing: StorageFile {
        let file: any StorageFile
        let path: String
        let owner: RefusingFileSystem
        init(file: any StorageFile, path: String, owner: RefusingFileSystem) {
            (self.file, self.path, self.owner) = (file, path, owner)
        }
        func size() throws -> UInt64 { try file.size() }
        func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try file.read(at: offset, into: buffer) }
        func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
            try owner.refuse("write", path, bytes: bytes.count)
            try file.write(at: offset, bytes)
        }
        func sync() throws { try file.sync() }
        func fullSync() throws { try file.fullSync() }
        func truncate(to size: UInt64) throws {
            if try size < file.size() || owner.errno == EROFS { try owner.refuse("truncate", path) }
            try file.truncate(to: size)
        }
        func tryLockExclusive() throws -> Bool { try file.tryLockExclusive() }
        func unlock() throws { try file.unlock() }
    }
}
