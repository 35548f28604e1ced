import BinaryCoding
import EventLog
import Foundation
import SecureMemory

/// The destinations a vault has backed up to (`backups.sealed`, a sealed snapshot of purpose 5,
/// docs/backup.md): where, when, to which position, how many bytes, and the data keys (id and
/// label) the backup holds, so that `erase` and `backup list` can say which backups still hold
/// erased months without reaching the destinations. Sealed under the master key (a path can say
/// where a person keeps their disks); a re-key seals it again under the new one.
struct BackupRegistry: Equatable {
    struct Entry: Equatable {
        var path: String
        /// Milliseconds since 1970.
        var lastRun: Int64
        var eventCount: UInt64
        var offset: UInt64
        var bytes: UInt64
        /// The live data keys the backup's key table holds: ids (never reused, so a month erased and
        /// imported again under a new key is told apart) and labels (`heart/2024-03`, which outlive a
        /// re-key's new ids).
        var liveKeys: [LiveKey]
    }

    var entries: [Entry] = []

    static let fileName = "backups.sealed"
    static let purpose: UInt16 = 5
    /// 2 (since 2026-11-27 16:00 UTC): keys with their ids; 1 held labels only, and is still read.
    static let formatVersion: UInt32 = 2

    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.write(Self.formatVersion)
        w.write(UInt32(entries.count))
        for entry in entries {
            let path = Array(entry.path.utf8)
            w.write(UInt32(path.count))
            w.write(path)
            w.write(entry.lastRun)
            w.write(entry.eventCount)
            w.write(entry.offset)
            w.write(entry.bytes)
            w.write(UInt32(entry.liveKeys.count))
            for key in entry.liveKeys {
                w.write(key.id)
                w.write(UInt16(key.label.count))
                w.write(key.label)
            }
        }
        return w.bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, path: String) throws -> BackupRegistry {
        var r = ByteReader(bytes)
        func fail() -> VaultError { .cannotRead(path: path, reason: "the list of backups is malformed") }
        guard let version = r.read(UInt32.self), version == 1 || version == formatVersion, let count = r.read(UInt32.self) else { throw fail() }
        var registry = BackupRegistry()
        for _ in 0..<count {
            guard let pathLength = r.read(UInt32.self), pathLength <= 1 << 16, let pathBytes = r.readBytes(Int(pathLength)),
                  let lastRun = r.read(Int64.self), let events = r.read(UInt64.self), let offset = r.read(UInt64.self),
                  let size = r.read(UInt64.self), let labelCount = r.read(UInt32.self), labelCount <= 1 << 20 else { throw fail() }
            var keys: [LiveKey] = []
            for _ in 0..<labelCount {
                // Version 1 kept no ids: 0 is none (table ids start at 2), so its labels decide.
                let id = version == 1 ? 0 : r.read(UInt32.self)
                guard let id, let length = r.read(UInt16.self), let label = r.readBytes(Int(length)) else { throw fail() }
                keys.append(LiveKey(id: id, label: label))
            }
            registry.entries.append(Entry(path: String(decoding: pathBytes, as: UTF8.self), lastRun: lastRun, eventCount: events,
                                          offset: offset, bytes: size, liveKeys: keys))
        }
        return registry
    }

    static func read(in directory: String, vaultID: [UInt8], masterKey: SecretKey, fileSystem: any FileSystem) throws -> BackupRegistry {
        let path = directory + "/" + fileName
        do {
            guard let contents = try SealedSnapshot.read(from: path, purpose: purpose, vaultID: vaultID, masterKey: masterKey,
                                                         fileSystem: fileSystem, limit: 1 << 28) else { return BackupRegistry() }
            return try contents.plaintext.withUnsafeBytes { try decode($0, path: path) }
        } catch let problem as SealedSnapshot.Problem {
            throw VaultError.cannotRead(path: path, reason: problem.description)
        }
    }

    /// Of a backup's keys, those the vault has destroyed since: by id where the vault's table holds
    /// it; by label where it does not (a re-key gave the vault new ids), when no live key has it.
    static func erased(of keys: [LiveKey], vaultKeys: [EventLog.DataKey]) -> [LiveKey] {
        let byID = Dictionary(vaultKeys.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let liveLabels = Set(vaultKeys.filter { $0.erasedAt == nil }.map(\.label))
        return keys.filter { key in
            if let known = byID[key.id], known.label == key.label { return known.erasedAt != nil }
            return !liveLabels.contains(key.label)
        }
    }

    func write(in directory: String, log: EventLog, masterKey: SecretKey, fileSystem: any FileSystem) throws {
        try encoded().withUnsafeBytes { plaintext in
            try SealedSnapshot.write(plaintext, purpose: Self.purpose, position: log.genesis, vaultID: log.vaultID, masterKey: masterKey,
                                     to: directory + "/" + Self.fileName, fileSystem: fileSystem)
        }
    }
}
