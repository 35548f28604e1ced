/// Why a study load stopped. Each names the file, database or place; none holds a health value.
public enum StudyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--into` is neither `sqlite:PATH` nor `postgres://USER@HOST:PORT/DB`.
    case badTarget(String)
    /// The roster file is malformed at `line` (0: the whole file).
    case roster(path: String, line: Int, reason: String)
    /// A bundle signed by someone the roster does not list.
    case notOnRoster(path: String, fingerprint: String)
    /// The database refused an operation or could not be reached; nothing of the bundle was kept.
    case database(target: String, reason: String)
    /// The database was made by a later version of this tool.
    case newerSchema(target: String, found: Int, supported: Int)
    /// The server broke a deadlock with another loader (or a serialization failure) by rolling
    /// the bundle back; it is tried again, and this is said only when tries ran out.
    case busy(path: String)

    public var description: String {
        switch self {
        case .badTarget(let target):
            "\(target): --into takes sqlite:PATH or postgres://USER@HOST:PORT/DB"
        case .roster(let path, let line, let reason):
            line > 0 ? "\(path):\(line): \(reason)" : "\(path): \(reason)"
        case .notOnRoster(let path, let fingerprint):
            "\(path): signed by \(fingerprint), who is not on the roster; nothing of it was loaded"
        case .database(let target, let reason):
            "\(target): \(reason)"
        case .newerSchema(let target, let found, let supported):
            "\(target): study schema \(found) is newer than this build's \(supported); update vaultctl"
        case .busy(let path):
            "\(path): other loads of the same study kept getting in its way; nothing of it was kept, load it again"
        }
    }
}
