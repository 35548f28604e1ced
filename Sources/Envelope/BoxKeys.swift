import CSodium
import SecureMemory

/// An X25519 key pair for anonymous sealed boxes (libsodium `crypto_box_seal`).
public struct BoxKeyPair: Sendable {
    public static let publicKeyBytes = Int(crypto_box_PUBLICKEYBYTES)
    public static let secretKeyBytes = Int(crypto_box_SECRETKEYBYTES)
    /// What sealing adds to a message: an ephemeral public key and a tag.
    public static let sealOverhead = Int(crypto_box_sealbytes())

    public let publicKey: [UInt8]
    public let secretKey: SecureBytes

    /// A fresh key pair.
    public static func generate() -> BoxKeyPair {
        Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        let secret = SecureBytes(count: secretKeyBytes) { sk in
            Sodium.require(crypto_box_keypair(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self)), "crypto_box_keypair")
        }
        return BoxKeyPair(publicKey: publicKey, secretKey: secret)
    }

    /// Rebuilds a pair from its secret key.
    public init(secretKey: SecureBytes) throws {
        guard secretKey.count == Self.secretKeyBytes else { throw EnvelopeError.invalidKey("an X25519 secret key has 32 bytes") }
        Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        let rc = secretKey.withUnsafeBytes { sk in
            crypto_scalarmult_base(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard rc == 0 else { throw EnvelopeError.invalidKey("the X25519 secret key gives no valid public key") }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    private init(publicKey: [UInt8], secretKey: SecureBytes) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Seals `secret` so that only the holder of `publicKey`'s secret key can open it.
    public static func seal(_ secret: SecureBytes, to publicKey: [UInt8]) throws -> [UInt8] {
        guard publicKey.count == publicKeyBytes else { throw EnvelopeError.invalidKey("an X25519 public key has 32 bytes") }
        Sodium.ensureInitialized()
        var sealed = [UInt8](repeating: 0, count: secret.count + sealOverhead)
        let rc = secret.withUnsafeBytes { m in
            crypto_box_seal(&sealed, m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count), publicKey)
        }
        guard rc == 0 else { throw EnvelopeError.invalidKey("the public key is not a valid X25519 point") }
        return sealed
    }

    /// Opens what `seal` sealed to this pair's public key, into secure memory.
    public func open(_ sealed: [UInt8]) throws -> SecureBytes {
        guard sealed.count > Self.sealOverhead else { throw EnvelopeError.notForThisKey }
        var ok = false
        let opened = SecureBytes(count: sealed.count - Self.sealOverhead) { out in
            ok = secretKey.withUnsafeBytes { sk in
                crypto_box_seal_open(out.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed, UInt64(sealed.count),
                                     publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
            }
        }
        guard ok else { throw EnvelopeError.notForThisKey }
        return opened
    }
}
