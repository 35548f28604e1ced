import EventLog
import Foundation

/// A backup directory (docs/backup.md): the vault's ciphertext as of one committed position,
/// laid out so that one atomic rename commits a run and a killed run leaves the previous backup
/// whole.
///
/// ```
/// DEST/HEALTHVAULT-BACKUP   magic "HVBACKUP", version u16 (1), reserved u16, vault id (16)
/// DEST/CURRENT              "state-N events-M.log\n": the commit point of a run
/// DEST/state-N/             keyslot, events.head, keys.sealed, identity.sealed, server-tls.sealed
/// DEST/events-M.log         the log's bytes; past the state's head offset, an unfinished run's
/// DEST/backup.lock          held with flock by a run
/// ```
struct BackupDestination {
    let path: String
    let fileSystem: any FileSystem

    static let markerName = "HEALTHVAULT-BACKUP"
    static let currentName = "CURRENT"
    static let lockName = "backup.lock"
    static let magic: [UInt8] = Array("HVBACKUP".utf8)
    static let version: UInt16 = 1
    /// The vault's files a state holds besides the log, in the order a restore writes them (the
    /// keyslot last, as a re-key moves it). Only `events.head` and `keyslot` must be there.
    static let stateFiles = ["keys.sealed", "events.head", "identity.sealed", Vault.serverCredentialsFileName, "keyslot"]

    /// What `CURRENT` names.
    struct State: Equatable {
        var number: Int
        var logNumber: Int
        var stateDirectory: String { "state-\(number)" }
        var logName: String { "events-\(logNumber).log" }
        var line: String { "\(stateDirectory) \(logName)\n" }

        init(number: Int, logNumber: Int) {
            self.number = number
            self.logNumber = logNumber
        }

        init?(parsing text: String) {
            let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            guard parts.count == 2, parts[0].hasPrefix("state-"), parts[1].hasPrefix("events-"), parts[1].hasSuffix(".log"),
                  let number = Int(parts[0].dropFirst(6)), let log = Int(parts[1].dropFirst(7).dropLast(4)), number > 0, log > 0 else { return nil }
            (self.number, self.logNumber) = (number, log)
        }
    }

    func file(_ name: String) -> String { path + "/" + name }
    func stateFile(_ state: State, _ name: String) -> String { path + "/" + state.stateDirectory + "/" + name }

    /// The marker's bytes for a vault.
    static func marker(vaultID: [UInt8]) -> [UInt8] {
        magic + [UInt8(version & 0xFF), UInt8(version >> 8), 0, 0] + vaultID
    }

    /// Checks that `path` is this vault's backup, or an empty (or new) directory that can become
    /// one; throws a `BackupError` naming what is there otherwise. Returns whether it holds a backup.
    func check(vaultID: [UInt8]) throws -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        guard isDirectory.boolValue else { throw BackupError.notADirectory(path: path) }
        guard let marker = try fileSystem.readFileIfPresent(file(Self.markerName), limit: 64) else {
            // A first run killed before its marker was in place leaves the marker's temporary file
            // and the lock: the folder is still the backup's to make.
            let ours = [Self.markerName + ".tmp", Self.lockName, "lost+found"]
            let names = try fileSystem.contentsOfDirectory(path).filter { !ours.contains($0) && !$0.hasPrefix(".") }
            guard names.isEmpty else { throw BackupError.notABackup(path: path) }
            return false
        }
        guard marker.count == 28, marker.prefix(8).elementsEqual(Self.magic) else { throw BackupError.notABackup(path: path) }
        guard marker[8] == 1, marker[9] == 0 else { throw BackupError.unsupportedVersion(path: path, version: Int(marker[8]) | Int(marker[9]) << 8) }
        guard Array(marker.suffix(16)) == vaultID else { throw BackupError.otherVault(path: path) }
        return true
    }

    /// The state `CURRENT` names, nil when no run has committed yet.
    func current() throws -> State? {
        guard let bytes = try fileSystem.readFileIfPresent(file(Self.currentName), limit: 256) else { return nil }
        guard let state = State(parsing: String(decoding: bytes, as: UTF8.self)) else {
            throw BackupError.damaged(path: file(Self.currentName), reason: "does not name a state and a log")
        }
        return state
    }

    /// A state's files that exist, by name.
    func stateContents(_ state: State) throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        for name in Self.stateFiles {
            if let bytes = try fileSystem.readFileIfPresent(stateFile(state, name), limit: 64 << 20) { contents[name] = bytes }
        }
        for required in ["events.head", "keyslot"] where contents[required] == nil {
            throw BackupError.damaged(path: stateFile(state, required), reason: "missing")
        }
        return contents
    }

    /// Writes a new state directory holding `files`, every file and the folders synced.
    func writeState(_ state: State, files: [String: [UInt8]]) throws {
        let directory = file(state.stateDirectory)
        if fileSystem.exists(directory) { try removeState(directory) }
        try fileSystem.createDirectory(directory)
        for name in Self.stateFiles {
            guard let bytes = files[name] else { continue }
            let handle = try fileSystem.open(directory + "/" + name, mode: .createNew)
            try bytes.withUnsafeBytes { try handle.write(at: 0, $0) }
            try handle.fullSync()
        }
        try fileSystem.syncDirectory(directory)
        try fileSystem.syncDirectory(path)
    }

    /// Removes a state directory, its key table's bytes overwritten with zeros first: an erasure
    /// since that state was written must not stay readable in it. (A failed run's own new state
    /// holds the vault's current table, which nothing erased is in: it is only removed.)
    func removeState(_ directory: String, zeroingKeyTable: Bool = true) throws {
        let table = directory + "/keys.sealed"
        if zeroingKeyTable, fileSystem.exists(table) {
            let handle = try fileSystem.open(table, mode: .readWrite)
            let size = try handle.size()
            let zeros = [UInt8](repeating: 0, count: Int(size))
            try zeros.withUnsafeBytes { try handle.write(at: 0, $0) }
            try handle.fullSync()
        }
        for name in try fileSystem.contentsOfDirectory(directory) { try fileSystem.remove(directory + "/" + name) }
        // The removals durable before the folder goes (a power cut never brings back half a state).
        try fileSystem.syncDirectory(directory)
        try fileSystem.removeDirectory(directory)
        try fileSystem.syncDirectory(path)
    }

    /// Removes what no committed state names: older states (their key tables zeroed), logs of
    /// before a re-key, a run's temporary files.
    func removeLeftovers(keeping state: State?) throws {
        for name in try fileSystem.contentsOfDirectory(path) {
            if name.hasPrefix("state-"), name != state?.stateDirectory {
                try removeState(file(name))
            } else if name.hasPrefix("events-"), name.hasSuffix(".log"), name != state?.logName {
                try fileSystem.remove(file(name))
                try fileSystem.syncDirectory(path)
            } else if name.hasSuffix(".tmp") {
                try fileSystem.remove(file(name))
            }
        }
    }

    /// Every byte the backup holds (what `backup list` shows).
    func size() throws -> UInt64 {
        var total: UInt64 = 0
        func add(_ directory: String) throws {
            for name in try fileSystem.contentsOfDirectory(directory) {
                let full = directory + "/" + name
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory) else { continue }
                if isDirectory.boolValue { try add(full) } else { total += try fileSystem.open(full, mode: .readOnly).size() }
            }
        }
        try add(path)
        return total
    }
}

/// Why a backup, a verification of one or a restore could not be done.
public enum BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    case notADirectory(path: String)
    /// A directory with other files and no backup marker: nothing is written into it.
    case notABackup(path: String)
    case otherVault(path: String)
    case unsupportedVersion(path: String, version: Int)
    case damaged(path: String, reason: String)
    /// Another backup runs to the destination (its lock is held).
    case busy(path: String)
    /// A restore into a directory that is not empty.
    case targetNotEmpty(path: String)
    /// No backup at the path.
    case noBackup(path: String)
    /// A destination inside the vault, or the vault inside it.
    case insideVault(path: String)
    /// A write to the destination failed (full, read-only, unplugged); the previous backup stands.
    case cannotWrite(path: String, reason: String)
    /// The destination holds more events than the vault: a later state than the vault's.
    case backupAhead(path: String, backup: UInt64, vault: UInt64)
    /// A destination backed up to before holds no backup now (an unmounted disk's folder).
    case backupMissing(path: String)

    /// Whether the error is about the destination itself (what is there, a write to it, a run in
    /// progress): a run with the passphrase would meet it again.
    public var isAboutTheDestination: Bool {
        switch self {
        case .notADirectory, .notABackup, .otherVault, .unsupportedVersion, .busy, .insideVault, .cannotWrite: true
        case .damaged, .targetNotEmpty, .noBackup, .backupAhead, .backupMissing: false
        }
    }

    public var description: String {
        switch self {
        case .notADirectory(let path): "\(path) is not a directory"
        case .notABackup(let path): "\(path) holds other files and no healthvault backup; choose an empty directory or this vault's backup"
        case .otherVault(let path): "\(path) holds a backup of another vault; choose another directory"
        case .unsupportedVersion(let path, let version): "\(path) is a backup of format version \(version), which this build does not read"
        case .damaged(let path, let reason): "the backup is damaged: \(path) \(reason)"
        case .busy(let path): "another backup is running to \(path)"
        case .targetNotEmpty(let path): "\(path) is not empty; restore into a new or empty directory"
        case .noBackup(let path): "no healthvault backup at \(path) (no run has completed there)"
        case .insideVault(let path): "\(path) is the vault's own directory or holds it; back up to another disk or folder"
        case .backupAhead(let path, let backup, let vault):
            "the backup at \(path) holds \(backup) events, the vault \(vault): it is of a later state (was the vault restored from an older copy?); "
                + "nothing was written; move that backup aside to back up this vault there"
        case .backupMissing(let path):
            "\(path) was backed up to before and is gone: is the disk mounted? (to start a new backup there, create the folder first)"
        case .cannotWrite(let path, let reason):
            "cannot write the backup to \(path) (\(reason)); the previous backup there is unchanged and the next run resumes"
        }
    }
}
