import Foundation

/// Where `study load --into` writes: an embedded SQLite file (the default) or a PostgreSQL server.
public enum StudyTarget: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    /// `postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=disable|prefer|require]`; the password
    /// may instead come from `PGPASSWORD`. TLS is tried first unless `sslmode=disable` (health
    /// data crosses the network), required with `sslmode=require`; certificates are verified.
    case postgres(user: String, password: String?, host: String, port: Int, database: String, tls: TLSMode)

    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

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
        let mode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        guard let tls = TLSMode(rawValue: mode) else { throw StudyError.badTarget(text) }
        self = .postgres(user: user, password: url.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"], host: host,
                         port: url.port ?? 5432, database: database.isEmpty ? user : database, tls: tls)
    }

    /// The target without its password, for messages.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let user, _, let host, let port, let database, _): "postgres://\(user)@\(host):\(port)/\(database)"
        }
    }
}
