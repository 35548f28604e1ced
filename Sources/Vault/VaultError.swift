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
        }
    }
}
