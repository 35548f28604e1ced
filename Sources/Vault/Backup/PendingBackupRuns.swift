import BinaryCoding
import Envelope
import EventLog
import Foundation
import SecureMemory

/// Backup runs made without the passphrase (docs/backup.md, "Runs without the passphrase").
///
/// Such a run cannot open the list of destinations (`backups.sealed`, under the master key), so
/// it appends a record of itself to `backups.pending`, sealed (`crypto_box_seal`) to the vault's
/// backup-run public key (`backups.pub`, beside it in the clear: a public key says nothing). The
/// next command holding the master key opens the records into the list; the list written, the
/// file goes.
///
/// ```
/// backups.pub      magic "HVBKPUB1" (8) || vault id (16) || X25519 public key (32)
/// backups.pending  records, each: length u32 LE || crypto_box_seal(run)
/// run              magic "HVBKRUN1" (8) || vault id (16) || last run i64 (ms since 1970)
///                  || events u64 || log offset u64 || bytes u64 || key table's BLAKE2b-256 (32)
///                  || flags u8 (bit 0: the run went on from a state holding the same key table)
///                  || path length u32 || path (UTF-8) || zeros to a multiple of 256 bytes
/// ```
enum PendingBackupRuns {
    static let fileName = "backups.pending"
    static let publicKeyFileName = "backups.pub"
    static let publicKeyMagic: [UInt8] = Array("HVBKPUB1".utf8)
    static let recordMagic: [UInt8] = Array("HVBKRUN1".utf8)
    /// Records past this size are not a run's (a path is at most 64 KiB).
    static let maximumRecord = 1 << 17

    /// One run, as recorded.
    struct Run: Equatable {
        var path: String
        var lastRun: Int64
        var eventCount: UInt64
        var offset: UInt64
        var bytes: UInt64
        /// The digest of the key table the run copied (`EventLog.digest(ofKeyTable:)`).
        var keyTableDigest: [UInt8]
        /// Whether the destination's previous state held the same key table (the run went on from
        /// it); false for a first run.
        var continued: Bool
    }

    /// Plaintext records are padded to this, so that a record's size does not tell a path's length.
    static let paddedSize = 256

    /// The key pair records are sealed to, derived from the master key (its own purpose).
    static func keyPair(masterKey: SecretKey) throws -> BoxKeyPair {
        let seed = masterKey.derive(subkeyID: 1, context: "hvbkruns")
        return try seed.withUnsafeBytes { try BoxKeyPair(secretKey: SecureBytes(copying: $0)) }
    }

    static func publicKeyFile(vaultID: [UInt8], publicKey: [UInt8]) -> [UInt8] { publicKeyMagic + vaultID + publicKey }

    /// Writes `backups.pub` into `directory` unless it already holds this key's.
    static func writePublicKey(in directory: String, vaultID: [UInt8], masterKey: SecretKey, fileSystem: any FileSystem) throws {
        let expected = publicKeyFile(vaultID: vaultID, publicKey: try keyPair(masterKey: masterKey).publicKey)
        let path = directory + "/" + publicKeyFileName
        guard try fileSystem.readFileIfPresent(path, limit: 4096) != expected else { return }
        try fileSystem.replaceAtomically(path, with: expected)
    }

    /// The public key `backups.pub` holds for `vaultID`; nil when it is missing, malformed or
    /// another vault's (a run then needs the passphrase).
    static func publicKey(in directory: String, vaultID: [UInt8], fileSystem: any FileSystem) -> [UInt8]? {
        guard let bytes = try? fileSystem.readFileIfPresent(directory + "/" + publicKeyFileName, limit: 4096),
              bytes.count == 8 + 16 + BoxKeyPair.publicKeyBytes, bytes.prefix(8).elementsEqual(publicKeyMagic),
              Array(bytes[8..<24]) == vaultID else { return nil }
        return Array(bytes.suffix(BoxKeyPair.publicKeyBytes))
    }

    static func encoded(_ run: Run, vaultID: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.write(recordMagic)
        w.write(vaultID)
        w.write(run.lastRun)
        w.write(run.eventCount)
        w.write(run.offset)
        w.write(run.bytes)
        w.write(run.keyTableDigest)
        w.write(UInt8(run.continued ? 1 : 0))
        let path = Array(run.path.utf8)
        w.write(UInt32(path.count))
        w.write(path)
        w.write([UInt8](repeating: 0, count: (paddedSize - w.bytes.count % paddedSize) % paddedSize))
        return w.bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, vaultID: [UInt8]) -> Run? {
        var r = ByteReader(bytes)
        guard r.readBytes(8) == recordMagic, r.readBytes(16) == vaultID, let lastRun = r.read(Int64.self),
              let events = r.read(UInt64.self), let offset = r.read(UInt64.self), let size = r.read(UInt64.self),
              let digest = r.readBytes(32), let flags = r.read(UInt8.self), flags <= 1, let length = r.read(UInt32.self),
              let path = r.readBytes(Int(length)), r.readBytes(r.remaining)?.allSatisfy({ $0 == 0 }) == true else { return nil }
        return Run(path: String(decoding: path, as: UTF8.self), lastRun: lastRun, eventCount: events, offset: offset, bytes: size,
                   keyTableDigest: digest, continued: flags == 1)
    }

    /// The length of the whole records at the start of `bytes` (a record cut by a crash ends them).
    static func wholeRecords(_ bytes: [UInt8]) -> [Range<Int>] {
        var records: [Range<Int>] = []
        var offset = 0
        while offset + 4 <= bytes.count {
            let length = Int(UInt32(littleEndianBytes: bytes[offset..<offset + 4])!)
            guard length <= maximumRecord, offset + 4 + length <= bytes.count else { break }
            records.append(offset + 4..<offset + 4 + length)
            offset += 4 + length
        }
        return records
    }

    /// Appends a record of `run`, sealed to `publicKey`, and syncs it. The caller holds the list's
    /// lock (`Vault.holdingRegistryLock`); a record a crash cut short is cut off first.
    static func append(_ run: Run, in directory: String, vaultID: [UInt8], publicKey: [UInt8], fileSystem: any FileSystem) throws {
        let plaintext = encoded(run, vaultID: vaultID)
        let sealed = try BoxKeyPair.seal(plaintext.withUnsafeBytes { SecureBytes(copying: $0) }, to: publicKey)
        let path = directory + "/" + fileName
        let created = !fileSystem.exists(path)
        let file = try fileSystem.open(path, mode: .createIfMissing)
        // A new file's name durable too: a run said done must not vanish with a power cut.
        if created { try fileSystem.syncDirectory(directory) }
        let existing = try fileSystem.readFileIfPresent(path, limit: 1 << 26) ?? []
        let end = UInt64(wholeRecords(existing).last?.upperBound ?? 0)
        if end < UInt64(existing.count) { try file.truncate(to: end) }
        var record = ByteWriter(capacity: 4 + sealed.count)
        record.write(UInt32(sealed.count))
        record.write(sealed)
        try record.bytes.withUnsafeBytes { try file.write(at: end, $0) }
        try file.fullSync()
    }

    /// The runs recorded in `directory`, in the order they were made, and how many records could
    /// not be opened (sealed to another key: altered, or left by a re-key's crash under the old one).
    static func read(in directory: String, vaultID: [UInt8], masterKey: SecretKey, fileSystem: any FileSystem) throws -> (runs: [Run], unreadable: Int) {
        guard let bytes = try fileSystem.readFileIfPresent(directory + "/" + fileName, limit: 1 << 26), !bytes.isEmpty else { return ([], 0) }
        let keys = try keyPair(masterKey: masterKey)
        var runs: [Run] = []
        var unreadable = 0
        for range in wholeRecords(bytes) {
            guard let opened = try? keys.open(Array(bytes[range])), let run = opened.withUnsafeBytes({ decode($0, vaultID: vaultID) }) else {
                unreadable += 1
                continue
            }
            runs.append(run)
        }
        return (runs, unreadable)
    }

    /// Removes the records (the list holding them has been written). The caller holds the list's lock.
    static func remove(in directory: String, fileSystem: any FileSystem) throws {
        let path = directory + "/" + fileName
        guard fileSystem.exists(path) else { return }
        try fileSystem.remove(path)
        try fileSystem.syncDirectory(directory)
    }
}

extension BackupRegistry {
    /// The list with the runs made without the passphrase in it, in the order they were recorded
    /// (all after the list was last written, which removes them). Which keys a run's backup holds,
    /// without reaching it:
    /// - a run that went on from a state holding the same key table keeps its entry's keys (the
    ///   table the destination holds is the one of the run the entry stands for);
    /// - otherwise, the live keys of the vault's table when that is the table the run copied (by
    ///   digest; `tableKeys` are read from the same bytes);
    /// - otherwise every key of the vault's table, live or destroyed: a superset of what the run
    ///   copied, so that an erasure since (or racing the run) is named, never missed; a key made
    ///   since, or destroyed before the run, may be counted too, until the next run with the key.
    /// No clock is trusted.
    mutating func merge(_ runs: [PendingBackupRuns.Run], tableKeys: [EventLog.DataKey], tableDigest: [UInt8]?) {
        for run in runs {
            let existing = entries.first { $0.path == run.path }
            let keys: [LiveKey]
            if run.continued, let existing {
                keys = existing.liveKeys
            } else if run.keyTableDigest == tableDigest {
                keys = tableKeys.compactMap(\.liveKey)
            } else {
                keys = tableKeys.map { LiveKey(id: $0.id, label: $0.label) }
            }
            entries.removeAll { $0.path == run.path }
            entries.append(Entry(path: run.path, lastRun: run.lastRun, eventCount: run.eventCount, offset: run.offset, bytes: run.bytes,
                                 liveKeys: keys))
        }
    }
}
