import Foundation

/// A real PostgreSQL server (Debian's `postgresql` package) for one test: a new cluster in a
/// temporary directory, listening on a free loopback port and a socket in that directory, trust
/// authentication for the `postgres` user; stopped (immediately) and removed in `deinit`.
/// As root, the cluster belongs to the `postgres` user (initdb refuses to run as root).
public final class PostgresServer {
    public let port: Int
    public let directory: String
    private let binaries: String
    private let asPostgresUser: Bool

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

    public init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw Unavailable(description: "Debian's postgresql is needed (scripts/ensure-deps.sh --test installs it)")
        }
        binaries = "/usr/lib/postgresql/\(version)/bin"
        asPostgresUser = getuid() == 0
        directory = "/tmp/hv-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if asPostgresUser { try Self.run("/bin/chown", ["postgres:postgres", directory]) }
        try Self.run(binaries + "/initdb", ["-D", directory + "/data", "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"], asPostgresUser: asPostgresUser)
        var started: Int?
        for _ in 0..<5 {
            let candidate = Int.random(in: 20_000..<60_000)
            let options = "-p \(candidate) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off"
            if (try? Self.run(binaries + "/pg_ctl", ["-D", directory + "/data", "-o", options, "-l", directory + "/log", "-w", "start"],
                              asPostgresUser: asPostgresUser)) != nil {
                started = candidate
                break
            }
        }
        guard let started else {
            try? FileManager.default.removeItem(atPath: directory)
            throw Unavailable(description: "PostgreSQL did not start (log in \(directory)/log)")
        }
        port = started
    }

    deinit {
        try? runAsOwner(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `psql -At -c SQL` against the server; returns its output without the last newline.
    public func psql(_ sql: String) throws -> String {
        try psql([sql])
    }

    /// Runs `psql -At -c SQL1 -c SQL2 …` (one session: a `SET` holds for what follows).
    public func psql(_ commands: [String]) throws -> String {
        let (status, output) = try Self.capture(binaries + "/psql",
                                                ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-At", "-v", "ON_ERROR_STOP=1"]
                                                    + commands.flatMap { ["-c", $0] })
        guard status == 0 else { throw Unavailable(description: "psql failed: \(output)") }
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }

    private func runAsOwner(_ binary: String, _ arguments: [String]) throws {
        try Self.run(binary, arguments, asPostgresUser: asPostgresUser)
    }

    private static func run(_ binary: String, _ arguments: [String], asPostgresUser: Bool) throws {
        if asPostgresUser {
            let command = ([binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            try Self.run("/bin/su", ["postgres", "-s", "/bin/sh", "-c", command])
        } else {
            try Self.run(binary, arguments)
        }
    }

    private static func run(_ binary: String, _ arguments: [String]) throws {
        let (status, output) = try capture(binary, arguments)
        guard status == 0 else { throw Unavailable(description: "\(binary) failed: \(output)") }
    }

    /// Runs `binary` to its end with its output in a file, not a pipe (the server `pg_ctl start`
    /// leaves running would hold a pipe open), through posix_spawn and waitpid: Foundation's
    /// `Process` was seen missing the exit of `su` here.
    private static func capture(_ binary: String, _ arguments: [String]) throws -> (Int32, String) {
        let outputPath = NSTemporaryDirectory() + "hv-pg-output-\(UUID().uuidString)"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        guard rc == 0 else { throw Unavailable(description: "\(binary) could not be started: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : -1, text)
    }
}
