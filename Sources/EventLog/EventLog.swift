import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// An append-only log of opaque events, sealed in frames with XChaCha20-Poly1305 and chained
/// with BLAKE2b, with one durable commit per `append`.
///
/// One writer at a time holds the directory's lock; readers are never blocked. Opening checks
/// the head record, the frame it names and what follows it, and a writer cuts a torn tail
/// (reported in `tornTail`): an open costs the tail, not the history. Damage before the head
/// surfaces when the frames holding it are read, naming the offset; `verify` reads everything.
/// The on-disk grammar is docs/log-format.md.
public final class EventLog {
    /// Whether the handle may append.
    public enum AccessMode: Sendable {
        case readOnly
        case readWrite
    }

    /// The key id of the audit key, which is never destroyed: audit events and everything that
    /// belongs to no label.
    public static let auditKeyID: UInt32 = LogFormat.auditKeyID

    /// The directory and its file names.
    public let directory: LogDirectory
    /// Random id of the vault this log belongs to; every frame carries it.
    public let vaultID: [UInt8]
    /// How the log was opened.
    public let mode: AccessMode
    /// The last committed position.
    public internal(set) var committed: LogPosition
    /// What opening found after the last commit. Opened for writing, it has been cut away.
    public internal(set) var tornTail: TornTail?
    /// Plaintext bytes a frame aims for; a batch larger than this spans several frames.
    /// Kept between 1 byte and the format's cap on a frame, whatever is assigned.
    public var targetFrameSize: Int {
        get { frameSize }
        set { frameSize = Swift.min(Swift.max(newValue, 1), LogFormat.maxPlaintextLength) }
    }
    /// Plaintext bytes an open transaction may hold across all its keys before every pending
    /// batch goes out as a (smaller) frame: an import touching a thousand category-months keeps
    /// this much in memory, not a frame's worth per key, and as much again while those batches
    /// are compressed in the background.
    public var pendingBudget: Int {
        get { pendingLimit }
        set { pendingLimit = newValue }
    }
    // The two settings are stored privately: a public stored property's every access is checked
    // for exclusivity at run time (other modules may access it), and `append` reads both for
    // each event.
    var frameSize = 1 << 20
    var pendingLimit = 2 << 20

    /// The log file's format version: 2 for logs this build creates, 1 for older ones (audit-key
    /// frames only, until the vault upgrades them).
    public let formatVersion: UInt16

    let fileSystem: any FileSystem
    let file: any StorageFile
    let lockFile: (any StorageFile)?
    var keyring: LogKeyring
    /// The data keys as written in `keys.sealed`, and as the open transaction extends them.
    var keyTable: KeyTable
    var savedKeyTable: KeyTable
    /// The digest of `keys.sealed` as written, which the head record names (nil for a
    /// version-1 log, which has no key table).
    var keyTableDigest: [UInt8]?
    var lastFrameOffset: UInt64
    /// Where the next frame goes: past `committed` while a transaction has written frames.
    var written: LogPosition
    var writtenLastFrameOffset: UInt64
    /// The running digest of the audit key's frames (`LogFormat.foldAudit`), committed and as
    /// the open transaction's frames extend it; empty for a version-1 log.
    var auditChain: [UInt8]
    var writtenAuditChain: [UInt8]
    var failed = false
    /// The frame index as far as this process has read or extended it.
    var frameIndex: FrameIndex?
    /// Frames the saved index holds (the one loaded or last saved): the index is saved again once
    /// enough frames were added to it since.
    var frameIndexSavedFrames = 0
    /// Batches whose events are being compressed on `compressionQueue` while the caller goes on
    /// adding events, oldest first; each is sealed and written, in order, before anything after it.
    var inFlight: [CompressionJob] = []
    let compressionQueue = DispatchQueue(label: "healthvault.frame-compression")

    init(
        directory: LogDirectory, vaultID: [UInt8], formatVersion: UInt16, mode: AccessMode, committed: LogPosition,
        lastFrameOffset: UInt64, tornTail: TornTail?, fileSystem: any FileSystem,
        file: any StorageFile, lockFile: (any StorageFile)?, keyring: LogKeyring, keyTable: KeyTable, keyTableDigest: [UInt8]?,
        auditChain: [UInt8]
    ) {
        self.auditChain = auditChain
        self.writtenAuditChain = auditChain
        self.formatVersion = formatVersion
        self.directory = directory
        self.vaultID = vaultID
        self.mode = mode
        self.committed = committed
        self.lastFrameOffset = lastFrameOffset
        self.written = committed
        self.writtenLastFrameOffset = lastFrameOffset
        self.tornTail = tornTail
        self.fileSystem = fileSystem
        self.file = file
        self.lockFile = lockFile
        self.keyring = keyring
        self.keyTable = keyTable
        self.savedKeyTable = keyTable
        self.keyTableDigest = keyTableDigest
    }

    /// The position before the first frame.
    public var genesis: LogPosition { Self.genesis(vaultID: vaultID) }

    static func genesis(vaultID: [UInt8]) -> LogPosition {
        LogPosition(sequence: 0, eventCount: 0, offset: UInt64(LogFormat.fileHeaderSize),
                    chainHash: FrameCipher.genesisHash(vaultID: vaultID))
    }

    /// The head record this handle last wrote: while it is still the file's, no other process
    /// wrote in between.
    var headWritten: [UInt8]?
    var lockReleased = false
}

@available(*, unavailable)
extension EventLog: Sendable {}
