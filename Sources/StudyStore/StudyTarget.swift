import Foundation

/// Where `study load --into` writes: an embedded SQLite file (the default) or a PostgreSQL server.
public enum StudyTarget: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    /// `postgres://USER[:PASSWORD]@HOST:PORT/DB`; the password may instead come from `PGPASSWORD`.
    case postgres(user: String, password: String?, host: String, port: Int, database: String)

    public init(_ text: String) throws {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StudyError.badTarget(text) }
            self = .sqlite(path: path)
            return
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"), let url = URLComponents(string: text),
              let user = url.user, !user.isEmpty, let host = url.host, !host.isEmpty else {
            throw StudyError.badTarget(text)
        }
        let database = String(url.path.drop { $0 == "/" })
        self = .postgres(user: user, password: url.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"], host: host,
                         port: url.port ?? 5432, database: database.isEmpty ? user : database)
    }

    /// The target without its password, for messages.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let user, _, let host, let port, let database): "postgres://\(user)@\(host):\(port)/\(database)"
        }
    }
}
