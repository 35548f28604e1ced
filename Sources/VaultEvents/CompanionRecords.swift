import Foundation
import HealthModel

/// A companion app was paired (`vaultctl companion pair NAME`): its name and the SHA-256 of its
/// bearer token. The token itself is shown once and never stored.
public struct CompanionPairing: Hashable, Sendable {
    public var at: Date
    public var name: String
    /// SHA-256 of the token's bytes (32 bytes).
    public var tokenHash: [UInt8]

    public init(at: Date, name: String, tokenHash: [UInt8]) {
        self.at = at
        self.name = name
        self.tokenHash = tokenHash
    }
}

/// A companion app's token was revoked (`vaultctl companion revoke NAME`): it stops working at once.
public struct CompanionRevocation: Hashable, Sendable {
    public var at: Date
    public var name: String

    public init(at: Date, name: String) {
        self.at = at
        self.name = name
    }
}

/// A sample posted again for the same metric, time range and source with another value replaced
/// the earlier one (Yappi's rule): the earlier sample no longer counts anywhere. The event names
/// the replaced sample's log index and repeats its fields, so that read models take its
/// contribution out without looking it up. The new value follows as an ordinary sample.
public struct SampleSupersession: Hashable, Sendable {
    /// The log-wide index of the replaced sample event.
    public var replacedIndex: UInt64
    /// The replaced sample, as it was recorded.
    public var replaced: HealthSample

    public init(replacedIndex: UInt64, replaced: HealthSample) {
        self.replacedIndex = replacedIndex
        self.replaced = replaced
    }
}
