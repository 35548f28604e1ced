import BinaryCoding
import SecureMemory

/// A file holding state derived from the log (the read models' database image), sealed under a
/// key derived from the master key and tagged with the log position it reflects.
///
/// Snapshots are caches: a missing, stale, foreign or damaged one is rebuilt from the log, which
/// stays the only source of truth. They are replaced atomically through a uniquely named
/// temporary file, so concurrent readers refreshing the same snapshot never tear it.
///
/// Layout (docs/log-format.md, "Snapshots"): magic(8) version(2) purpose(2) vaultID(16)
/// sequence(8) eventCount(8) offset(8) chainHash(32) nonce(24) plaintextLength(8), then the
/// XChaCha20-Poly1305 ciphertext with its 16-byte tag. Every header byte is associated data.
public enum SealedSnapshot {
    static let magic: [UInt8] = Array("HVSNAP\r\n".utf8)
    static let version: UInt16 = 1
    /// Bytes before the ciphertext: magic, version, purpose, vault id, position, nonce, plaintext length (last).
    public static let headerSize = 8 + 2 + 2 + 16 + 8 + 8 + 8 + 32 + 24 + 8
    static let keyContext: StaticString = "hvsnapsh"
    /// Snapshots above this size are refused before any allocation.
    public static let maximumPlaintext = 1 << 34

    /// A snapshot that opened: what it holds and the log position it reflects.
    public struct Contents {
        public var position: LogPosition
        /// The plaintext, in secure memory.
        public var plaintext: SecureBytes
    }

    /// Why a snapshot was not used.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case malformed(String)
        case foreignVault
        case unsupportedVersion(UInt16)
        case authenticationFailed

        public var description: String {
            switch self {
            case .malformed(let reason): "snapshot malformed (\(reason))"
            case .foreignVault: "snapshot belongs to another vault"
            case .unsupportedVersion(let v): "snapshot format version \(v) is not supported"
            case .authenticationFailed: "snapshot failed authentication"
            }
        }
    }

    /// Seals `plaintext` and replaces the file at `path` with it.
    public static func write(
        _ plaintext: UnsafeRawBufferPointer, purpose: UInt16, position: LogPosition, vaultID: [UInt8],
        masterKey: SecretKey, to path: String, fileSystem: any FileSystem = POSIXFileSystem()
    ) throws {
        let nonce = Sodium.randomBytes(LogFormat.nonceSize)
        let header = headerBytes(purpose: purpose, position: position, vaultID: vaultID, nonce: nonce, length: plaintext.count)
        var sealed = [UInt8](repeating: 0, count: header.count + plaintext.count + LogFormat.tagSize)
        let key = masterKey.derive(subkeyID: UInt64(purpose), context: keyContext)
        sealed.withUnsafeMutableBytes { out in
            header.withUnsafeBytes { headerRaw in
                out.copyMemory(from: headerRaw)
                nonce.withUnsafeBytes { nonceRaw in
                    FrameCipher.seal(plaintext, header: headerRaw, nonce: nonceRaw, key: key,
                                     into: UnsafeMutableRawBufferPointer(rebasing: out[header.count...]))
                }
            }
        }
        let temporary = path + ".tmp." + Sodium.randomBytes(8).hex
        do {
            let file = try fileSystem.open(temporary, mode: .createNew)
            try sealed.withUnsafeBytes { try file.write(at: 0, $0) }
            try file.fullSync()
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(directoryName(of: path))
        } catch {
            try? fileSystem.remove(temporary)
            throw error
        }
    }

    /// Opens the snapshot at `path`: nil when there is none; throws `Problem` when it cannot be
    /// used (the caller rebuilds), or an I/O error.
    public static func read(
        from path: String, purpose: UInt16, vaultID: [UInt8], masterKey: SecretKey,
        fileSystem: any FileSystem = POSIXFileSystem(), limit: Int = maximumPlaintext
    ) throws -> Contents? {
        guard fileSystem.exists(path) else { return nil }
        let file = try fileSystem.open(path, mode: .readOnly)
        let size = try file.size()
        guard size >= UInt64(headerSize + LogFormat.tagSize) else { throw Problem.malformed("shorter than its header") }
        let header = try file.readBytes(at: 0, count: headerSize)
        let (position, nonce, length) = try header.withUnsafeBytes { raw -> (LogPosition, [UInt8], UInt64) in
            var reader = ByteReader(raw)
            guard reader.readBytes(8) == magic else { throw Problem.malformed("bad magic bytes") }
            let version: UInt16 = reader.read()!
            guard version == Self.version else { throw Problem.unsupportedVersion(version) }
            guard reader.read(UInt16.self) == purpose else { throw Problem.malformed("snapshot of another kind") }
            guard reader.readBytes(16) == vaultID else { throw Problem.foreignVault }
            let position = LogPosition(sequence: reader.read()!, eventCount: reader.read()!, offset: reader.read()!,
                                       chainHash: reader.readBytes(32)!)
            return (position, reader.readBytes(LogFormat.nonceSize)!, reader.read()!)
        }
        // Checked before anything is allocated: a sparse file cannot make the reader reserve more
        // than the caller expects of this kind of snapshot.
        guard length <= UInt64(min(limit, maximumPlaintext)), size == UInt64(headerSize) + length + UInt64(LogFormat.tagSize) else {
            throw Problem.malformed("length does not match the file size")
        }
        let ciphertext = try file.readBytes(at: UInt64(headerSize), count: Int(length) + LogFormat.tagSize)
        let key = masterKey.derive(subkeyID: UInt64(purpose), context: keyContext)
        var authentic = false
        let plaintext = SecureBytes(count: Int(length)) { out in
            authentic = ciphertext.withUnsafeBytes { c in
                header.withUnsafeBytes { h in
                    nonce.withUnsafeBytes { n in FrameCipher.open(c, header: h, nonce: n, key: key, into: out) }
                }
            }
        }
        guard authentic else { throw Problem.authenticationFailed }
        return Contents(position: position, plaintext: plaintext)
    }

    /// Removes temporary files that a crashed writer left beside `path`.
    public static func removeLeftovers(of path: String, fileSystem: any FileSystem = POSIXFileSystem()) {
        let directory = directoryName(of: path)
        let prefix = String(path.dropFirst(directory.count + 1)) + ".tmp."
        guard let names = try? fileSystem.contentsOfDirectory(directory) else { return }
        for name in names where name.hasPrefix(prefix) { try? fileSystem.remove(directory + "/" + name) }
    }

    static func headerBytes(purpose: UInt16, position: LogPosition, vaultID: [UInt8], nonce: [UInt8], length: Int) -> [UInt8] {
        var w = ByteWriter(capacity: headerSize)
        w.write(magic)
        w.write(version)
        w.write(purpose)
        w.write(vaultID)
        w.write(position.sequence)
        w.write(position.eventCount)
        w.write(position.offset)
        w.write(position.chainHash)
        w.write(nonce)
        w.write(UInt64(length))
        return w.bytes
    }
}
