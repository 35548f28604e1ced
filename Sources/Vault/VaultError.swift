import HealthModel

/// Errors of the vault facade that are not the log's own.
public enum VaultError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `init` found a vault (or other files) where it was to create one.
    case directoryNotEmpty(path: String)
    /// No keyslot: nothing was ever initialised here.
    case noVault(path: String)
    /// The passphrase given is empty.
    case emptyPassphrase
    /// A metric name that is neither a known short name nor a HealthKit identifier.
    case unknownMetric(name: String, known: [String])
    /// A name `types` lists that `summary` does not sum (a workout activity).
    case notAMetric(name: String, reason: String)
    /// A ring goal outside what a person could set.
    case invalidGoal(ring: String, limit: Double)
    /// No imported source carries this name.
    case unknownSource(name: String)
    /// A plaintext copy was asked for inside the vault directory, where nothing may be readable.
    case plaintextInsideVault(path: String)
    /// The output file exists; nothing is overwritten.
    case fileExists(path: String)
    /// `identity.sealed` does not open.
    case identityDamaged
    /// No identity yet and the vault is open read-only.
    case noIdentity
    /// `identity.sealed` is gone though the log records an identity (or exports signed by one).
    case identityMissing(path: String, fingerprint: String?)
    /// `identity.sealed` holds another identity than the one the log records.
    case identityMismatch(recorded: String, found: String)
    /// No recipient of this name.
    case unknownRecipient(name: String)
    /// A recipient of this name exists with another key.
    case recipientExists(name: String)
    /// A new recipient's name looks the same as an existing one's (case, width, lookalike letters).
    case recipientLookalike(name: String, existing: String)
    /// A file could not be created, written or synced.
    case cannotWrite(path: String, reason: String)
    /// A file could not be read or opened.
    case cannotRead(path: String, reason: String)
    /// No paired companion app of this name (or it was revoked).
    case unknownCompanion(name: String)
    /// A companion app of this name is paired already.
    case companionExists(name: String)
    /// A companion name that is empty, too long, or holds control characters.
    case invalidCompanionName(reason: String)
    /// No tracker of this name.
    case unknownTracker(name: String)
    /// A tracker definition or entry that cannot be taken.
    case invalidTracker(reason: String)
    /// No exercise of this name in the catalogue or among the person's own.
    case unknownExercise(name: String)
    /// An exercise definition or set that cannot be taken.
    case invalidExercise(reason: String)
    /// A consent category that is not in the spec's list.
    case unknownCategory(name: String)
    /// A grant with a data period that ends before it starts, or other bad terms.
    case invalidConsent(reason: String)
    /// `erase` with terms that cannot be met (a range that ends before it starts).
    case invalidErasure(reason: String)
    /// `export` with no consent in force for the recipient.
    case noConsentInForce(recipient: String)

    public var description: String {
        switch self {
        case .directoryNotEmpty(let path):
            "\(path) already holds a vault or other files; choose an empty or new directory"
        case .noVault(let path):
            "no vault at \(path) (run `vaultctl init` first, or pass --vault DIR)"
        case .emptyPassphrase:
            "the passphrase is empty"
        case .notAMetric(let name, let reason):
            "'\(name)' is \(reason)"
        case .unknownMetric(let name, let known):
            "unknown metric '\(name)'; use a HealthKit identifier (HKQuantityTypeIdentifier...), a short name `vaultctl types` prints, or one of: \(known.joined(separator: ", "))"
        case .invalidGoal(let ring, let limit):
            "a \(ring) goal must be a number above 0 and at most \(Int(limit))"
        case .unknownSource(let name):
            "no imported source is named '\(name)' (see `vaultctl sources`)"
        case .plaintextInsideVault(let path):
            "\(path) is inside the vault directory; a plaintext copy must be written elsewhere"
        case .fileExists(let path):
            "\(path) already exists; choose a new file name"
        case .identityDamaged:
            "the vault's identity (identity.sealed) is damaged; bundles cannot be signed"
        case .identityMissing(let path, let fingerprint):
            "\(path) is missing, but the vault has signed as \(fingerprint ?? "an identity the log does not name") (see `vaultctl history`); restore it from a backup, or run `vaultctl identity rotate` to make a new one that recipients must learn again"
        case .identityMismatch(let recorded, let found):
            "identity.sealed holds identity \(found), but the log records \(recorded): it was replaced outside vaultctl; restore it from a backup, or run `vaultctl identity rotate`"
        case .noIdentity:
            "this vault has no identity yet; run a write command (recipient add, grant, export) to make one"
        case .unknownRecipient(let name):
            "no recipient named '\(name)' (see `vaultctl recipient list`)"
        case .recipientExists(let name):
            "a recipient named '\(name)' already exists with another key"
        case .recipientLookalike(let name, let existing):
            "'\(name)' looks the same as the existing recipient '\(existing)'; choose a name that cannot be mistaken for it"
        case .cannotWrite(let path, let reason), .cannotRead(let path, let reason):
            "\(path): \(reason)"
        case .unknownCompanion(let name):
            "no paired companion app named '\(name)' (see `vaultctl companion list`)"
        case .companionExists(let name):
            "a companion app named '\(name)' is paired already; revoke it first or choose another name"
        case .invalidCompanionName(let reason):
            "invalid companion name: \(reason)"
        case .unknownTracker(let name):
            "no tracker named '\(name)' (see `vaultctl tracker list`)"
        case .invalidTracker(let reason):
            reason
        case .unknownExercise(let name):
            "no exercise is named '\(name)' (see `vaultctl exercise list`, or add it with `vaultctl exercise add`)"
        case .invalidExercise(let reason):
            reason
        case .unknownCategory(let name):
            "unknown category '\(name)'; categories: \(HealthCategory.allCases.map(\.rawValue).joined(separator: ", "))"
        case .invalidConsent(let reason), .invalidErasure(let reason):
            reason
        case .noConsentInForce(let recipient):
            "no consent is in force for '\(recipient)' (never granted, revoked or expired); nothing was exported"
        }
    }
}
