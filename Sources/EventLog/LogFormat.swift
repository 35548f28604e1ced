/// The constants of the log's on-disk format. The grammar they belong to is in docs/log-format.md;
/// change one only together with that document and a new format version.
enum LogFormat {
    /// Version written into the file header of a new log and into every frame it gets.
    /// Version 1 logs (written before per-label data keys) hold only audit-key frames; they are
    /// read as they are and upgraded by the vault when it first writes. Version 2 logs (before
    /// compressed payloads) are read and appended to as version 2.
    static let version: UInt16 = 3
    /// Versions this build reads.
    static let readableVersions: ClosedRange<UInt16> = 1...3
    /// The first version whose frames may carry `deflateFlag`.
    static let firstCompressedVersion: UInt16 = 3

    /// `"HVLOG\0\r\n"`: the NUL and CR LF catch text-mode mangling, as PNG's signature does.
    static let fileMagic: [UInt8] = [0x48, 0x56, 0x4C, 0x4F, 0x47, 0x00, 0x0D, 0x0A]
    /// magic(8) version(2) reserved(2) vaultID(16) crc32c(4).
    static let fileHeaderSize = 32

    /// `"HVFR"`, the first bytes of every frame.
    static let frameMagic: [UInt8] = [0x48, 0x56, 0x46, 0x52]
    /// magic(4) version(2) flags(2) keyID(4) payloadLength(4) sequence(8) firstEvent(8)
    /// eventCount(4) vaultID(16) previousHash(32) nonce(24) crc32c(4).
    static let frameHeaderSize = 112
    /// Bytes of the header covered by the checksum and used as associated data (all but the checksum).
    static let frameHeaderAuthenticatedSize = frameHeaderSize - 4

    /// Flag bit: this frame ends a batch; readers ignore frames after the last one carrying it.
    static let commitFlag: UInt16 = 0x0001
    /// Frame flag: the plaintext is raw DEFLATE of the events (version 3 on).
    static let deflateFlag: UInt16 = 0x0002

    /// Hard cap on a frame's ciphertext, checked before anything is allocated.
    static let maxPayloadLength: UInt32 = 16 << 20
    /// XChaCha20-Poly1305 tag.
    static let tagSize = 16
    static let nonceSize = 24
    static let vaultIDSize = 16
    /// BLAKE2b-256 chain hash.
    static let hashSize = 32

    /// The largest plaintext one frame can carry.
    static var maxPlaintextLength: Int { Int(maxPayloadLength) - tagSize }

    /// Key id of the audit key, derived from the master key and never destroyed: every frame of a
    /// version-1 log, and the frames of events that belong to no label (audit events, the string
    /// and source definitions) in version 2. Ids from `KeyTable.firstID` on are the key table's.
    static let auditKeyID: UInt32 = 1

    /// `crypto_kdf` contexts of the master key's subkeys: frame keys (subkey id = key id) and the
    /// head record's MAC key (subkey id 1).
    static let frameKeyContext: StaticString = "hvlogkey"
    static let headKeyContext: StaticString = "hvloghed"

    /// Domain separation for the chain's first link.
    static let genesisLabel: [UInt8] = Array("healthvault log genesis v1".utf8)
    /// Domain separation for the first link of the audit key's running digest.
    static let auditGenesisLabel: [UInt8] = Array("healthvault audit chain v1".utf8)

    /// The audit digest before any audit frame: BLAKE2b-256(label || vaultID).
    static func auditGenesis(vaultID: [UInt8]) -> [UInt8] { FrameCipher.digest(auditGenesisLabel + vaultID) }

    /// The audit digest after one more audit frame: BLAKE2b-256(digest || the frame's chain hash).
    static func foldAudit(_ digest: [UInt8], _ frameHash: [UInt8]) -> [UInt8] { FrameCipher.digest(digest + frameHash) }
}
