import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// The log's committed state as a copy takes it (`vaultctl backup`), without the writer lock: the
/// head record, the key table it names, and an open handle on the log file. Frames below the
/// head's offset never change in place, and a re-key replaces the log file by a rename, so the
/// handle keeps reading the log the head describes; the head and table are read until they agree
/// (a writer replaces the table before the head that names it).
public struct CommittedFiles {
    /// The head record's bytes, authenticated with the master key.
    public var head: [UInt8]
    /// The key table's bytes as the head names them (nil for a version-1 log, which has none).
    public var keyTable: [UInt8]?
    public var position: LogPosition
    /// Where the last committed frame starts (0 when there is none).
    public var lastFrameOffset: UInt64
    public var vaultID: [UInt8]
    /// `keyTable`'s live data keys (those an erasure destroyed are not among them), by id and label.
    public var liveKeys: [LiveKey]
    /// The log file as it was when the head was read; its first `position.offset` bytes are the
    /// committed frames.
    public var log: any StorageFile
}

/// A data key that is live in a key table: its id (never reused) and label (`heart/2024-03`).
public struct LiveKey: Equatable, Sendable {
    public var id: UInt32
    public var label: [UInt8]

    public init(id: UInt32, label: [UInt8]) {
        self.id = id
        self.label = label
    }
}

extension EventLog {
    /// Reads the committed state of the log in `directory` (`CommittedFiles`). Retries while a
    /// writer is between replacing the table and the head; throws what the last attempt found.
    ///
    /// Without `masterKey` (a backup run without the passphrase) nothing is authenticated: the head
    /// is parsed, the key table is the one it names by digest but is not opened (`liveKeys` is
    /// empty), and whoever copies these files must not trust them; `backup verify` and `restore`
    /// authenticate everything.
    public static func committedFiles(in directory: String, masterKey: SecretKey?,
                                      fileSystem: any FileSystem = POSIXFileSystem()) throws -> CommittedFiles {
        let names = LogDirectory(directory)
        let keyring = masterKey.map { LogKeyring(masterKey: $0) }
        var lastProblem: Error = EventLogError.headRecordInvalid(path: names.head, reason: "missing")
        for attempt in 0..<50 {
            if attempt > 0 { usleep(20_000) }
            do {
                guard let headBytes = try fileSystem.readFileIfPresent(names.head, limit: HeadRecord.size + 1) else {
                    throw EventLogError.headRecordInvalid(path: names.head, reason: "missing")
                }
                let head = try keyring.map { try HeadRecord.decode(headBytes, key: $0.headKey, path: names.head) }
                    ?? HeadRecord.parseUnauthenticated(headBytes, path: names.head)
                let log = try fileSystem.open(names.log, mode: .readOnly)
                let header = try LogFileHeader.decode(try log.readBytes(at: 0, count: LogFormat.fileHeaderSize), path: names.log)
                guard header.vaultID == head.vaultID else {
                    throw EventLogError.headRecordInvalid(path: names.head, reason: "belongs to another vault")
                }
                var table: [UInt8]?
                var live: [LiveKey] = []
                if header.version >= 2 {
                    guard let bytes = try fileSystem.readFileIfPresent(names.keys, limit: KeyTable.maximumSize + 1),
                          bytes.count <= KeyTable.maximumSize else {
                        throw EventLogError.keyTableInvalid(path: names.keys, reason: "missing")
                    }
                    guard head.keyTables.contains(FrameCipher.digest(bytes)) else {
                        throw EventLogError.keyTableInvalid(path: names.keys, reason: "not the one the head record names")
                    }
                    if let keyring {
                        let opened = try KeyTable.open(bytes, vaultID: header.vaultID, tableKey: keyring.tableKey, path: names.keys)
                        live = dataKeys(of: opened).compactMap(\.liveKey)
                    }
                    table = bytes
                }
                // The head read again: unchanged, the table and the log handle belong to it.
                guard try fileSystem.readFileIfPresent(names.head, limit: HeadRecord.size + 1) == headBytes,
                      try log.size() >= head.committed.offset else {
                    throw EventLogError.headRecordInvalid(path: names.head, reason: "replaced while it was read")
                }
                return CommittedFiles(head: headBytes, keyTable: table, position: head.committed, lastFrameOffset: head.lastFrameOffset,
                                      vaultID: head.vaultID, liveKeys: live, log: log)
            } catch {
                lastProblem = error
            }
        }
        throw lastProblem
    }

    /// The position and last frame's offset a head record's bytes name (a backup's), authenticated
    /// with the master key.
    /// Without `masterKey`, unauthenticated (see `committedFiles`).
    public static func headPosition(of bytes: [UInt8], masterKey: SecretKey?, path: String) throws -> (position: LogPosition, lastFrameOffset: UInt64) {
        let head = try masterKey.map { try HeadRecord.decode(bytes, key: LogKeyring(masterKey: $0).headKey, path: path) }
            ?? HeadRecord.parseUnauthenticated(bytes, path: path)
        return (head.committed, head.lastFrameOffset)
    }

    /// The vault id the log file in `directory` begins with (unauthenticated); nil when there is
    /// no log or its header is not one.
    public static func vaultID(in directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> [UInt8]? {
        let names = LogDirectory(directory)
        guard fileSystem.exists(names.log) else { return nil }
        let log = try fileSystem.open(names.log, mode: .readOnly)
        return try? LogFileHeader.decode(try log.readBytes(at: 0, count: LogFormat.fileHeaderSize), path: names.log).vaultID
    }

    /// The digest a head record names a key table's bytes by (BLAKE2b-256).
    public static func digest(ofKeyTable bytes: [UInt8]) -> [UInt8] { FrameCipher.digest(bytes) }

    /// Every data key of a key table's bytes, live or destroyed, opened with the master key: the
    /// table on disk now, which a handle opened earlier may not have seen.
    public static func dataKeys(ofKeyTable bytes: [UInt8], vaultID: [UInt8], masterKey: SecretKey, path: String) throws -> [DataKey] {
        dataKeys(of: try KeyTable.open(bytes, vaultID: vaultID, tableKey: LogKeyring(masterKey: masterKey).tableKey, path: path))
    }

    /// The live data keys of a key table's bytes (a backup's), opened with the master key.
    public static func liveKeys(ofKeyTable bytes: [UInt8], vaultID: [UInt8], masterKey: SecretKey, path: String) throws -> [LiveKey] {
        try dataKeys(ofKeyTable: bytes, vaultID: vaultID, masterKey: masterKey, path: path).compactMap(\.liveKey)
    }
}
