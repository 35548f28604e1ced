import BinaryCoding
/// The fixed-size, authenticated header in front of every frame's ciphertext.
///
/// Every field but the checksum is associated data of the frame's AEAD, so none of them can be
/// changed without the frame failing authentication; the checksum only tells a torn or zeroed
/// header from a complete one before any cryptography runs.
struct FrameHeader: Equatable {
    var version: UInt16 = LogFormat.version
    var flags: UInt16
    var keyID: UInt32
    /// Ciphertext length including the tag.
    var payloadLength: UInt32
    /// Frame number, 1 for the first frame of the log, +1 per frame.
    var sequence: UInt64
    /// Number of events in the log before this frame.
    var firstEventIndex: UInt64
    var eventCount: UInt32
    var vaultID: [UInt8]
    var previousHash: [UInt8]
    var nonce: [UInt8]

    var isCommit: Bool { flags & LogFormat.commitFlag != 0 }
    var isCompressed: Bool { flags & LogFormat.deflateFlag != 0 }

    /// Serialises the header, checksum included.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.frameHeaderSize)
        writer.write(LogFormat.frameMagic)
        writer.write(version)
        writer.write(flags)
        writer.write(keyID)
        writer.write(payloadLength)
        writer.write(sequence)
        writer.write(firstEventIndex)
        writer.write(eventCount)
        writer.write(vaultID)
        writer.write(previousHash)
        writer.write(nonce)
        let crc = writer.bytes.withUnsafeBytes { CRC32C.checksum($0) }
        writer.write(crc)
        return writer.bytes
    }

    /// Parses and checks the structure of a header; says which defect it has otherwise.
    /// Version and checksum are checked here; vault, sequence and chain by the reader.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<FrameHeader, FrameDefect> {
        guard bytes.count >= LogFormat.frameHeaderSize else { return .failure(.truncatedHeader) }
        guard bytes.prefix(4).elementsEqual(LogFormat.frameMagic) else { return .failure(.badMagic) }
        let authenticated = UnsafeRawBufferPointer(rebasing: bytes.prefix(LogFormat.frameHeaderAuthenticatedSize))
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes.prefix(LogFormat.frameHeaderSize)))
        _ = reader.readBytes(4)
        let version: UInt16 = reader.read()!
        let flags: UInt16 = reader.read()!
        let keyID: UInt32 = reader.read()!
        let payloadLength: UInt32 = reader.read()!
        let sequence: UInt64 = reader.read()!
        let firstEventIndex: UInt64 = reader.read()!
        let eventCount: UInt32 = reader.read()!
        let vaultID = reader.readBytes(LogFormat.vaultIDSize)!
        let previousHash = reader.readBytes(LogFormat.hashSize)!
        let nonce = reader.readBytes(LogFormat.nonceSize)!
        let storedCRC: UInt32 = reader.read()!
        guard CRC32C.checksum(authenticated) == storedCRC else { return .failure(.headerChecksumMismatch) }
        guard LogFormat.readableVersions.contains(version) else { return .failure(.unsupportedVersion(version)) }
        let known = LogFormat.commitFlag | (version >= LogFormat.firstCompressedVersion ? LogFormat.deflateFlag : 0)
        guard flags & ~known == 0 else { return .failure(.unknownFlags(flags)) }
        // A version-1 frame is sealed with the audit key; only version 2 names table keys.
        guard version >= 2 || keyID == LogFormat.auditKeyID else { return .failure(.unknownKey(keyID)) }
        guard payloadLength <= LogFormat.maxPayloadLength, payloadLength >= UInt32(LogFormat.tagSize) else {
            return .failure(.payloadTooLarge(payloadLength))
        }
        return .success(FrameHeader(
            version: version, flags: flags, keyID: keyID, payloadLength: payloadLength,
            sequence: sequence, firstEventIndex: firstEventIndex, eventCount: eventCount,
            vaultID: vaultID, previousHash: previousHash, nonce: nonce))
    }
}
