import CompanionClient
import Foundation
import TestSupport
import VaultTestSupport

/// A vault (with the cheapest KDF: every command the tests run unlocks in microseconds) served by a real `vaultctl serve` process on a loopback
/// port the system chose; commands run against it as a user runs them.
final class ServedVault: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let cli = CLIRunner()
    var vault: String { directory.file("vault") }
    var passFile: String { directory.file("pass") }
    private(set) var server: Process?
    private(set) var port = 0
    private(set) var tls = true
    private var serverOutput: Pipe?
    private var serverErrors: PipeDrain?

    /// What the last server wrote on stderr (its log), once it ended.
    func serverLog() -> String {
        guard server == nil, let serverErrors else { return "" }
        return String(decoding: serverErrors.wait(), as: UTF8.self)
    }

    init() throws {
        _ = directory.passphraseFile("pass", "served vault passphrase")
        try makeVault(at: vault, passphraseFile: passFile)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// `vaultctl ARGS --vault V --passphrase-file P`.
    func run(_ arguments: [String]) throws -> CLIRunner.Result {
        try cli.run(arguments + ["--vault", vault, "--passphrase-file", passFile])
    }

    /// Pairs `name` and returns its token and the certificate's SHA-256.
    func pair(_ name: String) throws -> (token: String, certSHA256: String) {
        let result = try run(["companion", "pair", name, "--json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String],
              let token = object["token"], let cert = object["certSHA256"] else { throw Failure("pair failed: \(result.stderr)") }
        return (token, cert)
    }

    /// Starts `serve` (with `HEALTHVAULT_SERVE_LIMITS=limits` when given) and waits for the line
    /// naming its URL.
    func start(tls: Bool = true, limits: String? = nil, logLevel: String? = nil, arguments: [String] = []) throws {
        let out = Pipe()
        var cli = self.cli
        if let limits { cli.environment["HEALTHVAULT_SERVE_LIMITS"] = limits }
        if let logLevel { cli.environment["LOG_LEVEL"] = logLevel }
        let errors = Pipe()
        serverErrors = PipeDrain(errors.fileHandleForReading)
        let process = try cli.start(["serve", "--vault", vault, "--passphrase-file", passFile, "--listen", "127.0.0.1:0"] + (tls ? [] : ["--no-tls"]) + arguments,
                                    stdout: out, stderr: errors)
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while !text.contains("\n") {
            guard Date() < deadline, process.isRunning else { throw Failure("serve did not start: \(text)") }
            // A server that prints nothing must not block this read: poll first.
            guard let chunk = Deadline.read(out.fileHandleForReading, seconds: 1) else { continue }
            if chunk.isEmpty { usleep(10_000) }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
              let port = Int(text[range].split(separator: ":").last ?? "") else { throw Failure("no port in: \(text)") }
        self.port = port
        self.tls = tls
        server = process
        serverOutput = out
    }

    /// Sends `signal` to the server and waits for it to end; returns its exit status (or signal).
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) -> (status: Int32, bySignal: Bool) {
        guard let server else { return (0, false) }
        kill(server.processIdentifier, signal)
        server.waitUntilExit()
        self.server = nil
        return (server.terminationStatus, server.terminationReason == .uncaughtSignal)
    }

    /// A client on a new connection, pinning `certSHA256` when the server speaks TLS.
    func client(pin: String?) throws -> CompanionClient {
        try CompanionClient(host: "127.0.0.1", port: port, pinnedSHA256: tls ? pin : nil)
    }

    /// `summary METRIC --by day --json` as {day: value}.
    func dailyTotals(_ metric: String, from: String = "2000-01-01", to: String = "2030-12-31") throws -> [String: Double] {
        let result = try run(["summary", metric, "--from", from, "--to", to, "--json"])
        guard result.status == 0, let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] else {
            throw Failure("summary failed: \(result.stderr)")
        }
        var totals: [String: Double] = [:]
        for row in rows { if let period = row["period"] as? String, let value = row["value"] as? Double { totals[period] = value } }
        return totals
    }

    deinit { stop(SIGKILL) }
}

/// A Yappi post of one metric's entries: (timeRange, value).
func yappi(_ metric: String, _ entries: [(String, Double)]) -> String {
    let data = entries.map { #"{"timeRange":"\#($0.0)","value":\#($0.1)}"# }.joined(separator: ",")
    return #"{"metric":"\#(metric)","data":[\#(data)]}"#
}

/// The JSON object of a response body.
func object(_ body: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
}
