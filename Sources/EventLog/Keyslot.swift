import BinaryCoding
import SecureMemory
import CSodium

/// The vault's master key, wrapped (XChaCha20-Poly1305) by a key derived from the passphrase
/// with Argon2id. The algorithm, its costs and the salt are stored beside the wrapped key and
/// authenticated with it. Changing the passphrase rewrites only this file, atomically.
///
/// Layout (docs/log-format.md, "Keyslot"): magic(8) version(2) algorithm(2) opsLimit(8)
/// memLimit(8) salt(16) vaultID(16) nonce(24) wrappedKey(48) crc32c(4).
public struct Keyslot: Equatable, Sendable {
    static let magic: [UInt8] = Array("HVKEYS\r\n".utf8)
    static let version: UInt16 = 1
    /// Argon2id version 1.3 (libsodium `crypto_pwhash_ALG_ARGON2ID13`).
    static let argon2id13: UInt16 = 1
    static let saltSize = 16
    static let wrappedSize = SecretKey.byteCount + LogFormat.tagSize
    static let authenticatedSize = 8 + 2 + 2 + 8 + 8 + 16 + 16
    static let size = authenticatedSize + LogFormat.nonceSize + wrappedSize + 4

    /// The vault this keyslot opens.
    public let vaultID: [UInt8]
    /// The Argon2id costs of this keyslot.
    public let kdf: KDFParameters
    let salt: [UInt8]
    let nonce: [UInt8]
    let wrappedKey: [UInt8]

    /// Wraps `masterKey` under `passphrase` with a fresh salt and nonce.
    public static func seal(masterKey: SecretKey, vaultID: [UInt8], passphrase: Passphrase, kdf: KDFParameters) throws -> Keyslot {
        // A keyslot that could not be read back would lock the vault for good.
        guard kdf.isWithinBounds else { throw EventLogError.keyslotInvalid(path: "keyslot", reason: "key derivation costs out of bounds") }
        let salt = Sodium.randomBytes(saltSize)
        let nonce = Sodium.randomBytes(LogFormat.nonceSize)
        let wrappingKey = try deriveWrappingKey(passphrase: passphrase, salt: salt, kdf: kdf)
        let ad = authenticatedBytes(vaultID: vaultID, kdf: kdf, salt: salt)
        var wrapped = [UInt8](repeating: 0, count: wrappedSize)
        ad.withUnsafeBytes { adRaw in
            nonce.withUnsafeBytes { nonceRaw in
                wrapped.withUnsafeMutableBytes { out in
                    masterKey.withUnsafeBytes { plain in
                        FrameCipher.seal(plain, header: adRaw, nonce: nonceRaw, key: wrappingKey, into: out)
                    }
                }
            }
        }
        return Keyslot(vaultID: vaultID, kdf: kdf, salt: salt, nonce: nonce, wrappedKey: wrapped)
    }

    /// Derives the wrapping key and unwraps the master key.
    /// - Throws: `EventLogError.wrongPassphrase` when the passphrase does not open it.
    public func unlock(passphrase: Passphrase) throws -> SecretKey {
        let wrappingKey = try Self.deriveWrappingKey(passphrase: passphrase, salt: salt, kdf: kdf)
        let ad = Self.authenticatedBytes(vaultID: vaultID, kdf: kdf, salt: salt)
        var authentic = false
        let master = SecureBytes(count: SecretKey.byteCount) { out in
            authentic = ad.withUnsafeBytes { adRaw in
                nonce.withUnsafeBytes { nonceRaw in
                    wrappedKey.withUnsafeBytes { wrappedRaw in
                        FrameCipher.open(wrappedRaw, header: adRaw, nonce: nonceRaw, key: wrappingKey, into: out)
                    }
                }
            }
        }
        guard authentic else { throw EventLogError.wrongPassphrase }
        return SecretKey(master)
    }

    /// The same master key under a new passphrase (and, optionally, new costs), new salt and nonce.
    public func rewrapped(from old: Passphrase, to new: Passphrase, kdf newKDF: KDFParameters? = nil) throws -> Keyslot {
        let master = try unlock(passphrase: old)
        return try Self.seal(masterKey: master, vaultID: vaultID, passphrase: new, kdf: newKDF ?? kdf)
    }

    private static func deriveWrappingKey(passphrase: Passphrase, salt: [UInt8], kdf: KDFParameters) throws -> SecretKey {
        Sodium.ensureInitialized()
        let bytes = try SecureBytes(count: SecretKey.byteCount) { out in
            let rc = passphrase.storage.withUnsafeBytes { pass in
                crypto_pwhash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                    pass.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(pass.count),
                    salt, kdf.opsLimit, Int(kdf.memLimit), crypto_pwhash_ALG_ARGON2ID13)
            }
            // Fails only when the system cannot give Argon2id its memory.
            guard rc == 0 else { throw EventLogError.io(operation: "argon2id key derivation (out of memory?)", path: "keyslot", errno: 12) }
        }
        return SecretKey(bytes)
    }

    private static func authenticatedBytes(vaultID: [UInt8], kdf: KDFParameters, salt: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: authenticatedSize)
        writer.write(magic)
        writer.write(version)
        writer.write(argon2id13)
        writer.write(kdf.opsLimit)
        writer.write(kdf.memLimit)
        writer.write(salt)
        writer.write(vaultID)
        return writer.bytes
    }

    /// The file's bytes.
    public func encoded() -> [UInt8] {
        var bytes = Self.authenticatedBytes(vaultID: vaultID, kdf: kdf, salt: salt) + nonce + wrappedKey
        let crc = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Parses a keyslot file. The checksum separates a damaged file from a wrong passphrase.
    public static func decode(_ bytes: [UInt8], path: String) throws -> Keyslot {
        func invalid(_ reason: String) -> EventLogError { .keyslotInvalid(path: path, reason: reason) }
        guard bytes.count >= 12, bytes.prefix(8).elementsEqual(magic) else { throw invalid("not a healthvault keyslot") }
        return try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            _ = reader.readBytes(8)
            let version: UInt16 = reader.read()!
            guard bytes.count == size else {
                guard version == Self.version else { throw invalid("keyslot format version \(version) is newer than this build reads") }
                throw invalid("expected \(size) bytes, found \(bytes.count)")
            }
            // The checksum comes first, so that a flipped version bit reads as damage.
            let stored = raw.loadUnaligned(fromByteOffset: size - 4, as: UInt32.self).littleEndian
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw.prefix(size - 4))) == stored else {
                throw invalid("checksum mismatch: the file is damaged")
            }
            guard version == Self.version else { throw invalid("keyslot format version \(version) is newer than this build reads") }
            let algorithm: UInt16 = reader.read()!
            guard algorithm == argon2id13 else { throw invalid("unknown key derivation algorithm \(algorithm)") }
            let kdf = KDFParameters(opsLimit: reader.read()!, memLimit: reader.read()!)
            guard kdf.isWithinBounds else { throw invalid("key derivation costs out of bounds") }
            let salt = reader.readBytes(saltSize)!
            let vaultID = reader.readBytes(LogFormat.vaultIDSize)!
            let nonce = reader.readBytes(LogFormat.nonceSize)!
            let wrapped = reader.readBytes(wrappedSize)!
            return Keyslot(vaultID: vaultID, kdf: kdf, salt: salt, nonce: nonce, wrappedKey: wrapped)
        }
    }

    /// Reads the keyslot at `path`.
    public static func read(from path: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> Keyslot {
        guard let bytes = try fileSystem.readFileIfPresent(path, limit: size + 1) else { throw EventLogError.notFound(path: path) }
        return try decode(bytes, path: path)
    }

    /// Writes the keyslot so that a crash at any step leaves the old file or the new one whole.
    public func write(to path: String, fileSystem: any FileSystem = POSIXFileSystem()) throws {
        try fileSystem.replaceAtomically(path, with: encoded())
    }
}
