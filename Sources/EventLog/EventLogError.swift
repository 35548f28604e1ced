import Storage
import SecureMemory

/// What is wrong with one frame, as found by a reader. Never includes decrypted content.
public enum FrameDefect: Error, Equatable, Sendable, CustomStringConvertible {
    case truncatedHeader
    case badMagic
    case headerChecksumMismatch
    case unsupportedVersion(UInt16)
    case foreignVault
    case payloadTooLarge(UInt32)
    case truncatedPayload
    case sequenceMismatch(expected: UInt64, found: UInt64)
    case eventIndexMismatch(expected: UInt64, found: UInt64)
    case chainBroken
    case unknownKey(UInt32)
    case authenticationFailed
    case malformedPayload
    case unknownFlags(UInt16)

    public var description: String {
        switch self {
        case .truncatedHeader: "frame header cut short"
        case .badMagic: "no frame starts here"
        case .headerChecksumMismatch: "frame header checksum does not match"
        case .unsupportedVersion(let v): "frame format version \(v) is not supported by this build"
        case .foreignVault: "frame belongs to another vault"
        case .payloadTooLarge(let n): "frame claims a payload of \(n) bytes, over the format's cap"
        case .truncatedPayload: "frame payload cut short"
        case .sequenceMismatch(let e, let f): "expected frame #\(e), found #\(f) (frames deleted, reordered or duplicated)"
        case .eventIndexMismatch(let e, let f): "expected first event #\(e), found #\(f)"
        case .chainBroken: "hash chain broken (a frame before it was changed, removed or replaced)"
        case .unknownKey(let id): "frame is sealed with key id \(id), which this vault does not hold"
        case .authenticationFailed: "frame failed authentication (tampered or corrupted)"
        case .malformedPayload: "authenticated payload does not parse (written by a faulty writer)"
        case .unknownFlags(let flags): "frame flags \(String(flags, radix: 16)) are not known to this build"
        }
    }
}

/// Errors of the event log. Flat and `Equatable` so that tests can name the exact failure.
///
/// Messages say what is wrong, where (file and byte offset) and what to do; they never contain
/// event contents or key material.
public enum EventLogError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// The file does not start with this format's magic bytes.
    case notALog(path: String)
    /// Written by a newer format than this build reads.
    case unsupportedFormat(path: String, version: UInt16)
    /// Committed data is damaged: what reads it fails until it is restored from a backup.
    case damaged(path: String, offset: UInt64, defect: FrameDefect)
    /// The log holds fewer committed frames than its head record: truncated or rolled back.
    case rolledBack(path: String, headSequence: UInt64, logSequence: UInt64)
    /// The head record names an older commit than the log holds by more than one commit, or by
    /// one followed by an unfinished frame: no crash leaves that (the head is replaced after every
    /// commit, before the next one starts), so an older head was put back (over a cut log).
    /// Recovering would drop or hide authenticated, committed frames; nothing is changed.
    case headBehindLog(path: String, headSequence: UInt64, logSequence: UInt64, commitsPastHead: Int, tornOffset: UInt64?)
    /// The head record and the key table it names are older copies put back: the one commit past
    /// the head records what they cannot precede (an erasure whose keys the table still holds).
    /// A crash never leaves that; nothing is changed.
    case olderHeadAndKeyTable(path: String, reason: String)
    /// The head record is missing, unreadable or fails authentication.
    case headRecordInvalid(path: String, reason: String)
    /// Another process holds the writer lock.
    case locked(path: String)
    /// A previous append failed part-way; this handle refuses further writes.
    case writerFailed
    /// The handle was opened read-only.
    case readOnly
    /// One event is larger than a frame can carry.
    case eventTooLarge(size: Int, limit: Int)
    /// The passphrase does not open the keyslot.
    case wrongPassphrase
    /// The keyslot file is damaged or not a keyslot.
    case keyslotInvalid(path: String, reason: String)
    /// The key table (`keys.sealed`) is missing while frames need it, damaged, or not one.
    case keyTableInvalid(path: String, reason: String)
    /// Something already lives where a new log or vault was to be created.
    case alreadyExists(path: String)
    /// Nothing to open at this path.
    case notFound(path: String)

    public var description: String {
        switch self {
        case .io(let op, let path, let errno):
            "\(op) failed on \(path): \(systemErrorMessage(errno)) (errno \(errno))"
        case .notALog(let path):
            "\(path) is not a healthvault event log (bad magic bytes)"
        case .unsupportedFormat(let path, let version):
            "\(path) uses format version \(version), newer than this build reads; upgrade vaultctl"
        case .damaged(let path, let offset, let defect):
            "\(path) is damaged at byte offset \(offset): \(defect); every command that reads that frame fails: restore the vault from a backup"
        case .rolledBack(let path, let head, let log):
            "\(path) ends at frame #\(log) but its head record says frame #\(head) was committed: the log was truncated or rolled back"
        case .headBehindLog(let path, let head, let log, let commits, let offset):
            "\(path) holds \(commits) commit(s) through frame #\(log) past the frame #\(head) its head record names" + (offset.map { ", and is cut at byte offset \($0) after them" } ?? "") + ": an older head record was put back; nothing was changed, restore the vault from a backup"
        case .olderHeadAndKeyTable(let path, let reason):
            "\(path) and the key table it names are older copies put back (\(reason)): no crash leaves that; nothing was changed, restore the vault from a backup"
        case .headRecordInvalid(let path, let reason):
            "\(path): head record invalid (\(reason))"
        case .locked(let path):
            "another process is writing to this vault (lock held on \(path)); try again when it finishes"
        case .writerFailed:
            "an earlier write to the log failed; reopen the vault to recover before writing again"
        case .readOnly:
            "the log was opened read-only"
        case .eventTooLarge(let size, let limit):
            "an event of \(size) bytes exceeds the frame limit of \(limit) bytes"
        case .wrongPassphrase:
            "wrong passphrase: it does not open this vault's keyslot"
        case .keyslotInvalid(let path, let reason):
            "\(path): keyslot invalid (\(reason))"
        case .keyTableInvalid(let path, let reason):
            "\(path): key table invalid (\(reason)); the data keys of the frames it served cannot be read, restore it from a backup"
        case .alreadyExists(let path):
            "\(path) already exists; refusing to overwrite it"
        case .notFound(let path):
            "\(path) does not exist"
        }
    }
}

