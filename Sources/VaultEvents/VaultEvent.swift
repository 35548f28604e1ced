import Foundation
import HealthModel

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
    /// An ECG recording with its voltage series.
    case electrocardiogram(Electrocardiogram)
    /// A file was imported.
    case importRecorded(at: Date, ImportRecord)
    /// The person set a ring goal, in force from a day on.
    case goalSet(GoalSetting)
    /// The person set which sources count first when several cover the same time.
    case sourceOrderSet(at: Date, [SourceKey])
    /// A researcher was added with their public key.
    case recipientAdded(RecipientRecord)
    /// Consent was given.
    case consentGranted(ConsentGrant)
    /// Consent was withdrawn.
    case consentRevoked(ConsentRevocation)
    /// A bundle was written for a recipient.
    case exportPerformed(ExportRecord)
    /// The vault's signing and encryption identity was made, adopted or replaced.
    case identityRecorded(IdentityRecord)
    /// The master key was replaced and the log re-encrypted under it (`passwd --rekey`).
    case masterKeyRotated(at: Date)
    /// Data keys were destroyed: those categories' months are gone for good (`vaultctl erase`).
    case erased(ErasureRecord)
    /// A re-posted value replaced an earlier sample (a data event, under the sample's key).
    case sampleSuperseded(SampleSupersession)
    /// A companion app was paired; only its token's hash is kept.
    case companionPaired(CompanionPairing)
    /// A companion app's token was revoked.
    case companionRevoked(CompanionRevocation)
    /// A tracker was defined (or defined again).
    case trackerDefined(TrackerDefinition)
    /// A level logged for a tracker (a data event, under its category and month).
    case trackerEntry(TrackerEntry)
    /// A writer cut a torn tail off the log, after keeping its bytes aside.
    case tailCut(TailCutRecord)
    /// An exercise was defined (or defined again).
    case exerciseDefined(ExerciseDefinition)
    /// A set practised (a data event, under `workouts` and its day's month).
    case practiceLogged(PracticeEntry)

    /// The kind name used in the audit trail (`history --json`).
    public var kind: String {
        switch self {
        case .vaultCreated: "init"
        case .passphraseChanged: "passwd"
        case .importRecorded: "import"
        case .goalSet: "goal"
        case .sourceOrderSet: "sources"
        case .recipientAdded: "recipient"
        case .consentGranted: "grant"
        case .consentRevoked: "revoke"
        case .exportPerformed: "export"
        case .identityRecorded: "identity"
        case .masterKeyRotated: "rekey"
        case .erased: "erase"
        case .companionPaired: "companion-pair"
        case .companionRevoked: "companion-revoke"
        case .trackerDefined: "tracker"
        case .exerciseDefined: "exercise"
        case .tailCut: "tail-cut"
        case .sample, .workout, .route, .activitySummary, .characteristics, .correlation, .genericRecord, .electrocardiogram, .sampleSuperseded, .trackerEntry, .practiceLogged: "data"
        }
    }

    /// Whether the event belongs in the audit trail (`history`); data events do not.
    public var isAudit: Bool { kind != "data" }

    /// When the event was recorded, for audit events.
    public var date: Date? {
        switch self {
        case .vaultCreated(let at, _), .passphraseChanged(let at), .importRecorded(let at, _), .sourceOrderSet(let at, _),
             .masterKeyRotated(let at): at
        case .identityRecorded(let i): i.at
        case .goalSet(let goal): goal.at
        case .recipientAdded(let r): r.at
        case .consentGranted(let g): g.at
        case .consentRevoked(let r): r.at
        case .exportPerformed(let e): e.at
        case .erased(let e): e.at
        case .companionPaired(let p): p.at
        case .companionRevoked(let r): r.at
        case .trackerDefined(let t): t.at
        case .exerciseDefined(let d): d.at
        case .tailCut(let c): c.at
        default: nil
        }
    }
}

/// A ring goal the person set (`vaultctl goals set`).
public struct GoalSetting: Hashable, Sendable {
    public var at: Date
    public var ring: Ring
    /// kcal, minutes or hours.
    public var value: DecimalValue
    /// The first day it is in force.
    public var from: LocalDay

    public init(at: Date, ring: Ring, value: DecimalValue, from: LocalDay) {
        self.at = at
        self.ring = ring
        self.value = value
        self.from = from
    }
}
