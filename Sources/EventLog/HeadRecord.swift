import BinaryCoding
import SecureMemory

/// The small record beside the log naming its last committed frame, replaced atomically after
/// every commit. A log that holds less than its head names was truncated or rolled back.
///
/// Authenticated with a key derived from the master key, so it cannot be forged to match a
/// rolled-back log without the passphrase. Version 2 (the head of a version-2 log) also names the
/// key table (`keys.sealed`) by its digest, so that an older copy of the table put back (one
/// holding keys an erasure destroyed) is refused: the table in force, and while it is being
/// replaced the one replacing it.
struct HeadRecord: Equatable {
    static let magic: [UInt8] = Array("HVHEAD\r\n".utf8)
    /// The version written for version-2 logs; version 1 (124 bytes, no key table) is still read.
    static let version: UInt16 = 2
    static let sizeV1 = 8 + 2 + 2 + 16 + 8 + 8 + 8 + 8 + 32 + 32
    static let size = sizeV1 + 32 + 32 + 32

    var vaultID: [UInt8]
    var committed: LogPosition
    /// Offset where the last committed frame starts (0 when there is none).
    var lastFrameOffset: UInt64
    /// Digests of the key tables this head accepts: the one in force and, while a writer replaces
    /// it, the next. Empty for a version-1 head.
    var keyTables: [[UInt8]] = []
    /// Version 2: the running digest of the audit key's committed frames (`LogFormat.foldAudit`),
    /// so that the audit trail can be read from its own frames and still miss none.
    var auditChain: [UInt8] = []

    func encoded(key: SecretKey) -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.write(Self.magic)
        writer.write(keyTables.isEmpty ? UInt16(1) : Self.version)
        writer.write(UInt16(0))
        writer.write(vaultID)
        writer.write(committed.sequence)
        writer.write(committed.eventCount)
        writer.write(committed.offset)
        writer.write(lastFrameOffset)
        writer.write(committed.chainHash)
        if !keyTables.isEmpty {
            writer.write(keyTables[0])
            writer.write(keyTables.count > 1 ? keyTables[1] : [UInt8](repeating: 0, count: 32))
            writer.write(auditChain)
        }
        writer.write(FrameCipher.mac(writer.bytes, key: key))
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8], key: SecretKey, path: String) throws -> HeadRecord {
        func invalid(_ reason: String) -> EventLogError { .headRecordInvalid(path: path, reason: reason) }
        guard bytes.count == size || bytes.count == sizeV1, bytes.prefix(8).elementsEqual(magic) else { throw invalid("not a head record") }
        let body = Array(bytes.prefix(bytes.count - 32))
        let mac = FrameCipher.mac(body, key: key)
        let macMatches = mac.withUnsafeBytes { a in bytes.suffix(32).withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
        guard macMatches else { throw invalid("authentication failed: written by another vault or altered") }
        return try parseUnauthenticated(bytes, path: path)
    }

    /// The record's fields without checking its tag: for a reader without the master key (a
    /// backup run without the passphrase), which copies what it names and trusts none of it.
    static func parseUnauthenticated(_ bytes: [UInt8], path: String) throws -> HeadRecord {
        func invalid(_ reason: String) -> EventLogError { .headRecordInvalid(path: path, reason: reason) }
        guard bytes.count == size || bytes.count == sizeV1, bytes.prefix(8).elementsEqual(magic) else { throw invalid("not a head record") }
        return try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            _ = reader.readBytes(8)
            let version: UInt16 = reader.read()!
            guard version == 1 && bytes.count == sizeV1 || version == 2 && bytes.count == size else {
                throw invalid("format version \(version) is not supported")
            }
            _ = reader.read(UInt16.self)
            let vaultID = reader.readBytes(16)!
            let sequence: UInt64 = reader.read()!
            let events: UInt64 = reader.read()!
            let offset: UInt64 = reader.read()!
            let lastFrameOffset: UInt64 = reader.read()!
            let hash = reader.readBytes(32)!
            var tables: [[UInt8]] = []
            var audit: [UInt8] = []
            if version == 2 {
                tables.append(reader.readBytes(32)!)
                let next = reader.readBytes(32)!
                if next.contains(where: { $0 != 0 }) { tables.append(next) }
                audit = reader.readBytes(32)!
            }
            return HeadRecord(
                vaultID: vaultID,
                committed: LogPosition(sequence: sequence, eventCount: events, offset: offset, chainHash: hash),
                lastFrameOffset: lastFrameOffset, keyTables: tables, auditChain: audit)
        }
    }
}
