import Foundation
import HTTPTypes
import HealthModel
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import Vault

/// `vaultctl serve`: the companion endpoint on the person's own machine (docs/companion.md).
///
/// HTTP/1.1 on SwiftNIO through Hummingbird, TLS through swift-nio-ssl with the vault's own
/// certificate (its SHA-256 is in the pairing QR code). Posts are parsed on the server's threads
/// and written by one commit thread (`CommitQueue`), many posts to one fsync; a 201 is sent only
/// once the post is durable. No health value reaches a log line or an error.
public struct CompanionServer: Sendable {
    /// Limits every request is held to; each refusal is a status with a JSON error and changes nothing.
    public struct Limits: Sendable {
        /// Bytes of a request body (413 past it).
        public var maxBody = 8 << 20
        /// Samples and workouts in one post (413 past it).
        public var maxRecords = 100_000
        /// Posts per second per paired app, sustained, and the burst allowed (429 past it).
        public var postsPerSecond = 200.0
        public var burst = 400.0
        /// Seconds a connection may stay idle (a slow or stalled client is closed).
        public var idleTimeout: Int64 = 30
        /// Connections open at once; more wait in the listen backlog.
        public var maxConnections = 512

        public init() {}

        /// The limits with any of `HEALTHVAULT_SERVE_LIMITS` applied: comma-separated `name=value`
        /// of `body` (bytes), `records`, `rate` and `burst` (posts a second per app), `idle`
        /// (seconds), `connections`. For tuning and for tests that meet a limit quickly.
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Limits {
            var limits = Limits()
            guard let text = environment["HEALTHVAULT_SERVE_LIMITS"], !text.isEmpty else { return limits }
            for item in text.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let number = Double(parts[1]), number > 0 else { throw BadLimits(item: String(item)) }
                switch parts[0] {
                case "body": limits.maxBody = Int(number)
                case "records": limits.maxRecords = Int(number)
                case "rate": limits.postsPerSecond = number
                case "burst": limits.burst = number
                case "idle": limits.idleTimeout = Int64(number)
                case "connections": limits.maxConnections = Int(number)
                default: throw BadLimits(item: String(item))
                }
            }
            return limits
        }

        struct BadLimits: Error, CustomStringConvertible {
            var item: String
            var description: String {
                "HEALTHVAULT_SERVE_LIMITS: '\(item)' is not one of body=, records=, rate=, burst=, idle=, connections= with a positive number"
            }
        }
    }

    public var host: String
    public var port: Int
    public var tls: Bool
    public var limits = Limits()

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Ends a running server gracefully from inside the process (as SIGTERM does from outside):
    /// requests in flight are answered, then `run` returns.
    public final class Shutdown: @unchecked Sendable {
        private let lock = NSLock()
        private var group: ServiceGroup?
        private var requested = false

        public init() {}

        public func request() {
            let group: ServiceGroup? = lock.withLock {
                requested = true
                return self.group
            }
            if let group { Task { await group.triggerGracefulShutdown() } }
        }

        fileprivate func attach(_ group: ServiceGroup) {
            let already = lock.withLock {
                self.group = group
                return requested
            }
            if already { Task { await group.triggerGracefulShutdown() } }
        }
    }

    /// Serves until SIGINT or SIGTERM (or `shutdown` is requested). `onListening` gets the URL
    /// once the socket is bound (with the port the system chose for port 0).
    public func run(directory: String, passphrase: Passphrase, shutdown: Shutdown? = nil,
                    onListening: @escaping @Sendable (String) -> Void) async throws {
        var certificate: ServerCertificate?
        let ingest = try CompanionIngest(directory: directory, passphrase: passphrase) { vault in
            if tls { certificate = try ServerCertificate.loadOrCreate(in: vault) }
        }
        let queue = CommitQueue(ingest: ingest)
        queue.start()
        defer { queue.stop() }
        var logger = Logger(label: "vaultctl.serve")
        logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        let routes = CompanionRoutes(queue: queue, limits: limits)
        let router = Router()
        routes.install(on: router)
        let scheme = tls ? "https" : "http"
        let http = HTTPServerBuilder.http1(configuration: .init(idleTimeout: .seconds(limits.idleTimeout)))
        let app = Application(
            router: router,
            server: try certificate.map { try .tls(http, tlsConfiguration: $0.tlsConfiguration()) } ?? http,
            configuration: .init(address: .hostname(host, port: port), serverName: nil,
                                 availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections)),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                onListening("\(scheme)://\(host):\(bound)")
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        shutdown?.attach(group)
        try await group.run()
    }
}
