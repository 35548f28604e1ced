import Foundation

/// Everything the vault records, one event per fact. Samples, goals, consents and exports join
/// this family as they are built; the encoding gives each kind a stable number.
public enum VaultEvent: Equatable, Sendable {
    /// The vault was created, with the KDF preset chosen.
    case vaultCreated(at: Date, kdf: String)
    /// The passphrase was changed (the keyslot rewritten).
    case passphraseChanged(at: Date)

    /// The kind name used in the audit trail (`history --json`).
    public var kind: String {
        switch self {
        case .vaultCreated: "init"
        case .passphraseChanged: "passwd"
        }
    }

    /// When the event happened.
    public var date: Date {
        switch self {
        case .vaultCreated(let at, _), .passphraseChanged(let at): at
        }
    }
}
