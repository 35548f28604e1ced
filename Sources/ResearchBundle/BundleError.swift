/// Why a bundle or a key file could not be written, read or opened. Each names the file.
public enum BundleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A bundle that cannot be opened, and why. Nothing was written.
    case refused(path: String, reason: String)
    /// The output exists; nothing is overwritten.
    case fileExists(path: String)
    /// A file could not be created, written or synced.
    case cannotWrite(path: String, reason: String)
    /// A key file that is not one `vaultctl keygen` wrote.
    case invalidKeyFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .refused(let path, let reason): "\(path): \(reason); nothing was written"
        case .fileExists(let path): "\(path) already exists; choose a new file name"
        case .cannotWrite(let path, let reason), .invalidKeyFile(let path, let reason): "\(path): \(reason)"
        }
    }
}
