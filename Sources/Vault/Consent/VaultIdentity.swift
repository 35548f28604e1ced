import Envelope
import EventLog
import Foundation

/// The vault's own keys: Ed25519 to sign bundles, X25519 to receive. Made at `init`, kept in
/// `identity.sealed` under the master key (docs/bundle-format.md).
public struct VaultIdentity: Sendable {
    public let signing: SigningKeyPair
    public let encryption: BoxKeyPair

    /// What a researcher compares: `xxxx-xxxx-xxxx-xxxx-xxxx-xxxx-xxxx-xxxx`, the first 16 bytes of
    /// BLAKE2b-256(signing public key || encryption public key) in hex.
    public var fingerprint: String { Self.fingerprint(signingKey: signing.publicKey, encryptionKey: encryption.publicKey) }

    public static func fingerprint(signingKey: [UInt8], encryptionKey: [UInt8]) -> String {
        let hex = Array(Digest.of(signingKey + encryptionKey).prefix(16)).hex
        return stride(from: 0, to: hex.count, by: 4).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 4)])
        }.joined(separator: "-")
    }

    /// A fingerprint as typed by a person: hex digits only, lowercase.
    public static func normalized(fingerprint: String) -> String {
        String(fingerprint.lowercased().filter { $0.isHexDigit })
    }

    static func generate() -> VaultIdentity {
        VaultIdentity(signing: .generate(), encryption: .generate())
    }
}

extension Vault {
    public static let identityFileName = "identity.sealed"
    static let identityPurpose: UInt16 = 2

    var identityPath: String { directory + "/" + Self.identityFileName }

    /// The vault's identity. A vault made before identities existed, or whose `init` stopped
    /// before writing it, gets one the first time a write command asks.
    public func identity() throws -> VaultIdentity {
        SealedSnapshot.removeLeftovers(of: identityPath, fileSystem: fileSystem)
        if let contents = try SealedSnapshot.read(from: identityPath, purpose: Self.identityPurpose, vaultID: log.vaultID,
                                                 masterKey: masterKey, fileSystem: fileSystem) {
            guard contents.plaintext.count == SigningKeyPair.secretKeyBytes + BoxKeyPair.secretKeyBytes else {
                throw VaultError.identityDamaged
            }
            let signing = contents.plaintext.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<64])) }
            let box = contents.plaintext.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[64..<96])) }
            return VaultIdentity(signing: try SigningKeyPair(secretKey: signing), encryption: try BoxKeyPair(secretKey: box))
        }
        guard log.mode == .readWrite else { throw VaultError.noIdentity }
        let identity = VaultIdentity.generate()
        try writeIdentity(identity)
        return identity
    }

    func writeIdentity(_ identity: VaultIdentity) throws {
        let secret = SecureBytes(count: 96) { out in
            identity.signing.secretKey.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[0..<64]).copyMemory(from: $0) }
            identity.encryption.secretKey.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[64..<96]).copyMemory(from: $0) }
        }
        try secret.withUnsafeBytes { plaintext in
            try SealedSnapshot.write(plaintext, purpose: Self.identityPurpose, position: log.genesis, vaultID: log.vaultID,
                                     masterKey: masterKey, to: identityPath, fileSystem: fileSystem)
        }
    }
}
