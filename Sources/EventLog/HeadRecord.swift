import BinaryCoding
import SecureMemory

/// The small record beside the log naming its last committed frame, replaced atomically after
/// every commit. A log that holds less than its head names was truncated or rolled back.
///
/// Authenticated with a key derived from the master key, so it cannot be forged to match a
/// rolled-back log without the passphrase.
struct HeadRecord: Equatable {
    static let magic: [UInt8] = Array("HVHEAD\r\n".utf8)
    /// The head record's own format version (unchanged by the log's version 2).
    static let version: UInt16 = 1
    static let size = 8 + 2 + 2 + 16 + 8 + 8 + 8 + 8 + 32 + 32

    var vaultID: [UInt8]
    var committed: LogPosition
    /// Offset where the last committed frame starts (0 when there is none).
    var lastFrameOffset: UInt64

    func encoded(key: SecretKey) -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.write(Self.magic)
        writer.write(Self.version)
        writer.write(UInt16(0))
        writer.write(vaultID)
        writer.write(committed.sequence)
        writer.write(committed.eventCount)
        writer.write(committed.offset)
        writer.write(lastFrameOffset)
        writer.write(committed.chainHash)
        writer.write(FrameCipher.mac(writer.bytes, key: key))
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8], key: SecretKey, path: String) throws -> HeadRecord {
        func invalid(_ reason: String) -> EventLogError { .headRecordInvalid(path: path, reason: reason) }
        guard bytes.count == size, bytes.prefix(8).elementsEqual(magic) else { throw invalid("not a head record") }
        let body = Array(bytes.prefix(size - 32))
        let mac = FrameCipher.mac(body, key: key)
        let macMatches = mac.withUnsafeBytes { a in bytes.suffix(32).withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
        guard macMatches else { throw invalid("authentication failed: written by another vault or altered") }
        return try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            _ = reader.readBytes(8)
            let version: UInt16 = reader.read()!
            guard version == Self.version else { throw invalid("format version \(version) is not supported") }
            _ = reader.read(UInt16.self)
            let vaultID = reader.readBytes(16)!
            let sequence: UInt64 = reader.read()!
            let events: UInt64 = reader.read()!
            let offset: UInt64 = reader.read()!
            let lastFrameOffset: UInt64 = reader.read()!
            let hash = reader.readBytes(32)!
            return HeadRecord(
                vaultID: vaultID,
                committed: LogPosition(sequence: sequence, eventCount: events, offset: offset, chainHash: hash),
                lastFrameOffset: lastFrameOffset)
        }
    }
}
