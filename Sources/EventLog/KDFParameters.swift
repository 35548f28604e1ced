import CSodium

/// Argon2id cost parameters, stored in the keyslot beside the salt so that a vault made with
/// one setting opens on any machine, whatever its defaults are then.
public struct KDFParameters: Equatable, Sendable {
    /// Argon2id passes (libsodium `opslimit`).
    public var opsLimit: UInt64
    /// Memory in bytes (libsodium `memlimit`).
    public var memLimit: UInt64

    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// libsodium's interactive preset (2 passes, 64 MiB): about 0.1 s here.
    public static let interactive = KDFParameters(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_INTERACTIVE))
    /// libsodium's moderate preset (3 passes, 256 MiB): about 0.6 s here. The default.
    public static let moderate = KDFParameters(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MODERATE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_MODERATE))
    /// libsodium's sensitive preset (4 passes, 1 GiB): several seconds.
    public static let sensitive = KDFParameters(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_SENSITIVE), memLimit: UInt64(crypto_pwhash_MEMLIMIT_SENSITIVE))
    /// The smallest costs Argon2id allows. For tests only: it protects nothing.
    public static let minimumForTesting = KDFParameters(
        opsLimit: UInt64(crypto_pwhash_OPSLIMIT_MIN), memLimit: UInt64(crypto_pwhash_MEMLIMIT_MIN))

    /// The most a keyslot may ask for: a crafted keyslot must not make opening allocate without bound.
    static let maxMemLimit: UInt64 = 4 << 30
    static let maxOpsLimit: UInt64 = 64

    /// Whether a keyslot may ask for these costs (a decoded keyslot always does).
    public var isWithinBounds: Bool {
        opsLimit >= UInt64(crypto_pwhash_OPSLIMIT_MIN) && opsLimit <= Self.maxOpsLimit
            && memLimit >= UInt64(crypto_pwhash_MEMLIMIT_MIN) && memLimit <= Self.maxMemLimit
    }
}
