import Foundation

/// Everything the vault records, one event per fact. Samples, goals, consents and exports join
/// this family as they are built; the encoding gives each kind a stable number.
public enum VaultEvent: Equatable, Sendable {
    /// The vault was created, with the KDF preset chosen.
    case vaultCreated(at: Date, kdf: String)
    /// The passphrase was changed (the keyslot rewritten).
    case passphraseChanged(at: Date)
    /// A quantity or category sample.
    case sample(HealthSample)
    /// A workout with its events, statistics and route references.
    case workout(Workout)
    /// The points of a workout route.
    case route(WorkoutRoute)
    /// Apple's daily ring values and goals.
    case activitySummary(ActivitySummary)
    /// The `Me` characteristics (date of birth, sex, ...).
    case characteristics([MetadataEntry])
    /// A correlation (its members are separate samples).
    case correlation(Correlation)
    /// An element kept without a model of its own.
    case genericRecord(GenericRecord)
    /// A file was imported.
    case importRecorded(at: Date, ImportRecord)

    /// The kind name used in the audit trail (`history --json`).
    public var kind: String {
        switch self {
        case .vaultCreated: "init"
        case .passphraseChanged: "passwd"
        case .importRecorded: "import"
        case .sample, .workout, .route, .activitySummary, .characteristics, .correlation, .genericRecord: "data"
        }
    }

    /// Whether the event belongs in the audit trail (`history`); data events do not.
    public var isAudit: Bool { kind != "data" }

    /// When the event was recorded, for audit events.
    public var date: Date? {
        switch self {
        case .vaultCreated(let at, _), .passphraseChanged(let at), .importRecorded(let at, _): at
        default: nil
        }
    }
}
