/// Errors of the vault facade that are not the log's own.
public enum VaultError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `init` found a vault (or other files) where it was to create one.
    case directoryNotEmpty(path: String)
    /// No keyslot: nothing was ever initialised here.
    case noVault(path: String)
    /// An event in the log does not decode: written by a newer build, or a faulty one.
    case undecodableEvent(index: UInt64, reason: String)
    /// The passphrase given is empty.
    case emptyPassphrase
    /// A metric name that is neither a known short name nor a HealthKit identifier.
    case unknownMetric(name: String, known: [String])
    /// A ring goal outside what a person could set.
    case invalidGoal(ring: String, limit: Double)
    /// No imported source carries this name.
    case unknownSource(name: String)
    /// A plaintext copy was asked for inside the vault directory, where nothing may be readable.
    case plaintextInsideVault(path: String)
    /// The output file exists; nothing is overwritten.
    case fileExists(path: String)

    public var description: String {
        switch self {
        case .directoryNotEmpty(let path):
            "\(path) already holds a vault or other files; choose an empty or new directory"
        case .noVault(let path):
            "no vault at \(path) (run `vaultctl init` first, or pass --vault DIR)"
        case .undecodableEvent(let index, let reason):
            "event #\(index) cannot be decoded: \(reason)"
        case .emptyPassphrase:
            "the passphrase is empty"
        case .unknownMetric(let name, let known):
            "unknown metric '\(name)'; use a HealthKit identifier (HKQuantityTypeIdentifier...) or one of: \(known.joined(separator: ", "))"
        case .invalidGoal(let ring, let limit):
            "a \(ring) goal must be a number above 0 and at most \(Int(limit))"
        case .unknownSource(let name):
            "no imported source is named '\(name)' (see `vaultctl sources`)"
        case .plaintextInsideVault(let path):
            "\(path) is inside the vault directory; a plaintext copy must be written elsewhere"
        case .fileExists(let path):
            "\(path) already exists; choose a new file name"
        }
    }
}
