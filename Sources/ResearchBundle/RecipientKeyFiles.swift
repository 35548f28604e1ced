import Envelope
import Storage
import Foundation
import SecureMemory

/// A researcher's key files, as `vaultctl keygen` writes them (docs/bundle-format.md):
/// `PREFIX.pub` = `healthvault-public-key-v1` line, then the X25519 public key in base64;
/// `PREFIX.key` = `healthvault-secret-key-v1` line, then the X25519 secret key in base64 (0600).
public enum RecipientKeyFiles {
    static let publicHeader = "healthvault-public-key-v1"
    static let secretHeader = "healthvault-secret-key-v1"

    /// Writes a fresh pair to `prefix.pub` and `prefix.key`; refuses to overwrite either.
    @discardableResult
    public static func generate(prefix: String) throws -> [UInt8] {
        let pair = BoxKeyPair.generate()
        let publicPath = prefix + ".pub", secretPath = prefix + ".key"
        for path in [publicPath, secretPath] where FileManager.default.fileExists(atPath: path) {
            throw BundleError.fileExists(path: path)
        }
        var secretText = Array((secretHeader + "\n").utf8)
        var encoded = SecretBase64.encode(pair.secretKey)
        secretText += encoded
        secureZero(&encoded)
        secretText.append(0x0A)
        defer { secureZero(&secretText) }
        try NewFile.write(secretText, to: secretPath)
        do {
            try NewFile.write(Array((publicHeader + "\n" + Data(pair.publicKey).base64EncodedString() + "\n").utf8), to: publicPath)
        } catch {
            unlink(secretPath)
            throw error
        }
        return pair.publicKey
    }

    /// The public key in `path` (a `.pub` file).
    public static func readPublicKey(_ path: String) throws -> [UInt8] {
        let lines = try readLines(path)
        guard lines.count == 2, lines[0] == publicHeader, let key = Data(base64Encoded: lines[1]), key.count == BoxKeyPair.publicKeyBytes else {
            throw BundleError.invalidKeyFile(path: path, reason: "not a healthvault public key (written by `vaultctl keygen`)")
        }
        return Array(key)
    }

    /// The key pair in `path` (a `.key` file).
    public static func readSecretKey(_ path: String) throws -> BoxKeyPair {
        var bytes = try readBytes(path)
        defer { secureZero(&bytes) }
        let lines = bytes.split(separator: 0x0A)
        guard lines.count == 2, String(decoding: lines[0], as: UTF8.self) == secretHeader,
              let secret = SecretBase64.decode(lines[1], count: BoxKeyPair.secretKeyBytes) else {
            throw BundleError.invalidKeyFile(path: path, reason: "not a healthvault secret key (written by `vaultctl keygen`)")
        }
        return try BoxKeyPair(secretKey: secret)
    }

    private static func readLines(_ path: String) throws -> [String] {
        String(decoding: try readBytes(path), as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    private static func readBytes(_ path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BundleError.invalidKeyFile(path: path, reason: "cannot be read")
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: 4096) ?? Data()
        return Array(data)
    }
}
