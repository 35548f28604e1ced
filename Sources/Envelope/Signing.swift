import CSodium
import SecureMemory

/// An Ed25519 key pair (libsodium `crypto_sign`). The secret key lives in `sodium_malloc`'d memory.
public struct SigningKeyPair: Sendable {
    public static let publicKeyBytes = Int(crypto_sign_PUBLICKEYBYTES)
    public static let secretKeyBytes = Int(crypto_sign_SECRETKEYBYTES)
    public static let signatureBytes = Int(crypto_sign_BYTES)

    public let publicKey: [UInt8]
    public let secretKey: SecureBytes

    /// A fresh key pair.
    public static func generate() -> SigningKeyPair {
        Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        let secret = SecureBytes(count: secretKeyBytes) { sk in
            Sodium.require(crypto_sign_keypair(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self)), "crypto_sign_keypair")
        }
        return SigningKeyPair(publicKey: publicKey, secretKey: secret)
    }

    /// The key pair a 32-byte seed determines (`crypto_sign_seed_keypair`): for test vectors and
    /// fuzz harnesses that need the same sender in every run. Real identities use `generate()`.
    public init(seed: SecureBytes) throws {
        guard seed.count == Int(crypto_sign_SEEDBYTES) else { throw EnvelopeError.invalidKey("an Ed25519 seed has 32 bytes") }
        Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        let secret = SecureBytes(count: Self.secretKeyBytes) { sk in
            seed.withUnsafeBytes { s in
                Sodium.require(crypto_sign_seed_keypair(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                           s.baseAddress!.assumingMemoryBound(to: UInt8.self)), "crypto_sign_seed_keypair")
            }
        }
        self.init(publicKey: publicKey, secretKey: secret)
    }

    /// Rebuilds a pair from its 64-byte secret key (which embeds the public key).
    public init(secretKey: SecureBytes) throws {
        guard secretKey.count == Self.secretKeyBytes else { throw EnvelopeError.invalidKey("an Ed25519 secret key has 64 bytes") }
        self.secretKey = secretKey
        self.publicKey = secretKey.withUnsafeBytes { Array($0[32..<64]) }
    }

    private init(publicKey: [UInt8], secretKey: SecureBytes) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A detached signature of `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Self.signatureBytes)
        secretKey.withUnsafeBytes { sk in
            Sodium.require(crypto_sign_detached(&signature, nil, message, UInt64(message.count), sk.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                              "crypto_sign_detached")
        }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    public static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}
