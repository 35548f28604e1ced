import Foundation

/// The audit record of an identity: made at `init` (`created`), found in a vault made before
/// identities were recorded (`adopted`), or replaced by `vaultctl identity rotate` (`rotated`).
/// The log holds the public keys only.
public struct IdentityRecord: Hashable, Sendable {
    public enum Reason: String, Sendable { case created, adopted, rotated }
    public var at: Date
    public var reason: Reason
    public var signingKey: [UInt8]
    public var encryptionKey: [UInt8]

    public init(at: Date, reason: Reason, signingKey: [UInt8], encryptionKey: [UInt8]) {
        self.at = at
        self.reason = reason
        self.signingKey = signingKey
        self.encryptionKey = encryptionKey
    }
}
