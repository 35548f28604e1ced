import EventLog

/// The passphrase-hardening presets `init --kdf` offers.
public enum KDFPreset: String, CaseIterable, Sendable {
    case interactive
    case moderate
    case sensitive

    /// The Argon2id costs of the preset.
    public var parameters: KDFParameters {
        switch self {
        case .interactive: .interactive
        case .moderate: .moderate
        case .sensitive: .sensitive
        }
    }
}
