import ArgumentParser
import CompanionClient
import Foundation
import HealthModel
import SyntheticHealth

extension VaultBench {
    /// Issue 17's load: concurrent phones posting 24-sample batches to `vaultctl serve` over TLS
    /// on loopback, against a vault holding a generated export of `days` days; the anchor is the
    /// same posts through `vaultctl import`, one process each, in the same run.
    struct ServeBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Posts per second and latency of `vaultctl serve` under concurrent clients (issue 17), against `vaultctl import` per post.")

        @Option(help: "Days the vault's generated export covers.") var days = 3650
        @Option(help: "Concurrent clients, each a paired app on its own connection.") var clients = 16
        @Option(help: "Samples per post.") var batch = 24
        @Option(help: "Seconds of load measured (after one second of warm-up).") var seconds = 15.0
        @Option(help: "Posts sent through `vaultctl import`, one process each, for the anchor.") var importPosts = 20
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?
        @Option(help: "wrk, the external load generator run after the Swift clients (skipped when absent).") var wrk = "/usr/bin/wrk"
        @Option(help: "The wrk script that makes the posts.") var wrkScript = "scripts/wrk-companion.lua"

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench serve: \(clients) clients posting \(batch)-sample batches over TLS on loopback to a vault of \(days) generated days, --kdf interactive")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-bundle.zip"
            if !FileManager.default.fileExists(atPath: zip) { try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1)) }
            let passphrase = "\(work)/serve-pass", vault = "\(work)/vault-serve-\(days)", posts = "\(work)/serve-posts"
            for path in [vault, posts] { try? FileManager.default.removeItem(atPath: path) }
            defer { for path in [vault, posts, passphrase] { try? FileManager.default.removeItem(atPath: path) } }
            try Data("serve bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            try FileManager.default.createDirectory(atPath: posts, withIntermediateDirectories: true)
            func args(_ command: [String]) -> [String] { command + ["--vault", vault, "--passphrase-file", passphrase] }
            try cli.run(args(["init", "--kdf", "interactive"]))
            let (_, importSeconds) = try measure { try cli.run(args(["import", zip])) }
            print("vault: \(days) days imported in \(importSeconds.formatted(1)) s")
            var tokens: [String] = [], pin = ""
            for c in 0..<clients {
                let paired = try cli.output(args(["companion", "pair", "bench phone \(c)", "--json"]))
                let object = try JSONSerialization.jsonObject(with: paired) as? [String: String] ?? [:]
                tokens.append(object["token"] ?? "")
                pin = object["certSHA256"] ?? ""
            }

            // The anchor: each post a file and a process, on the same vault, before the server runs.
            var importTimes: [Double] = []
            for i in 0..<importPosts {
                let file = "\(posts)/post-\(i).json"
                try Data(Self.post(index: i, batch: batch).utf8).write(to: URL(fileURLWithPath: file))
                importTimes.append(try cli.time(args(["import", file])))
            }
            let importMedian = importTimes.sorted()[importTimes.count / 2]

            // The per-app rate limit raised: this measures capacity (issue 39).
            let server = try ServerProcess(binary: cli.binary, arguments: args(["serve", "--listen", "127.0.0.1:0"]),
                                           environment: ["HEALTHVAULT_SERVE_LIMITS": "rate=1000000,burst=1000000"])
            defer { server.stop() }
            // The first post after the start, from a new connection (its TLS handshake included):
            // the server's first commit reads the month it writes to.
            let firstPost = try measure {
                let client = try CompanionClient(host: "127.0.0.1", port: server.port, pinnedSHA256: pin)
                defer { client.close() }
                let response = try client.post("/companion/health", token: tokens[0], json: Self.post(index: 0, batch: batch))
                guard response.status == 201 else { throw ValidationError("the first post got \(response.status)") }
            }.1
            let load = try LoadRun(port: server.port, pin: pin, tokens: tokens, batch: batch, seconds: seconds).run()
            let peak = server.peakKiB()
            print("")
            print("serve     \(load.posts) posts in \(load.elapsed.formatted(1)) s: \((Double(load.posts) / load.elapsed).formatted(0)) posts/s, "
                  + "\((Double(load.posts * batch) / load.elapsed).formatted(0)) samples/s; latency p50 \(load.percentile(0.5).formatted(1)) ms, "
                  + "p99 \(load.percentile(0.99).formatted(1)) ms, max \(load.percentile(1).formatted(1)) ms; \(load.failures) failed; server peak RSS \((Double(peak) / 1024).formatted(0)) MiB")
            print("          target: >= 2,000 posts/s with p99 <= 25 ms")
            print("import    \(importPosts) posts, one `vaultctl import` process each: median \((importMedian * 1000).formatted(0)) ms a post = \((1 / importMedian).formatted(1)) posts/s")
            print("ratio     serve takes \(((Double(load.posts) / load.elapsed) * importMedian).formatted(0))x the posts per second of import-per-post")
            print("first     the first post after the start, a new connection: \((firstPost * 1000).formatted(0)) ms   target <= 100 ms: \(firstPost <= 0.1 ? "met" : "NOT MET")")
            guard FileManager.default.isExecutableFile(atPath: wrk), FileManager.default.fileExists(atPath: wrkScript) else {
                print("wrk       skipped: no \(wrk) or \(wrkScript) (apt-get install wrk)")
                return
            }
            let tokenFile = "\(work)/serve-tokens"
            try Data((tokens.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: tokenFile))
            defer { try? FileManager.default.removeItem(atPath: tokenFile) }
            // Fresh posts from June 2034 on (after the Swift clients' minutes), then every app
            // re-posting one hour of September 2034 with new values (the upsert path).
            for (mode, base, target) in [("fresh", 2_032_732_800, "target: >= 3,000 posts/s with p99 <= 25 ms"),
                                         ("repost", 2_040_681_600, "target: >= 1,500 posts/s with p99 <= 50 ms")] {
                let run = try WrkRun.run(wrk: wrk, script: wrkScript, port: server.port, seconds: Int(seconds), connections: clients,
                                         arguments: [tokenFile, mode, "\(base)", "\(batch)", "2"])
                print("wrk \(mode.padding(toLength: 6, withPad: " ", startingAt: 0)) \(run.requests) posts in \(run.seconds.formatted(1)) s: \((Double(run.requests) / run.seconds).formatted(0)) posts/s; "
                      + "latency p50 \((run.p50 / 1000).formatted(1)) ms, p99 \((run.p99 / 1000).formatted(1)) ms, max \((run.max / 1000).formatted(1)) ms; "
                      + "\(run.non2xx) not 2xx, \(run.socketErrors) socket errors (wrk 2 threads, \(clients) keep-alive TLS connections)")
                print("           \(target)")
            }
        }

        /// Post number `index` of a client: `batch` one-minute STEPS samples from the start of the
        /// vault's last month on (2033-12-01 UTC), as a phone posts today's data. Every client is
        /// its own paired app, so their samples are distinct sources' even where minutes meet.
        ///
        /// The minutes are written by arithmetic, not a `DateFormatter`: one made and used for each
        /// post cost the clients 323 µs a post against 51 µs now (release builds, the same bytes),
        /// on the two cores the server has, which `wrk`'s Lua script never paid
        /// (docs/benchmarks.md, "serve").
        static func post(index: Int, batch: Int) -> String {
            let base: Int64 = 2_017_008_000
            let entries = (0..<batch).map { i -> String in
                let start = base + Int64(index * batch + i) * 60
                return #"{"timeRange":"\#(utcMinute(start))/\#(utcMinute(start + 60))","value":\#(10 + (index + i) % 50)}"#
            }
            return #"{"metric":"STEPS","data":[\#(entries.joined(separator: ","))]}"#
        }

        /// `yyyy-MM-dd HH:mm` of Unix seconds `t`, in UTC.
        static func utcMinute(_ t: Int64) -> String {
            let day = t / 86_400, second = t % 86_400  // t is after 1970
            let (y, m, d) = LocalDay.civil(fromDays: day)
            func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
            return "\(y)-\(two(m))-\(two(d)) \(two(second / 3600)):\(two(second % 3600 / 60))"
        }
    }
}

/// One run of wrk with `scripts/wrk-companion.lua`, read from the line its `done` prints.
struct WrkRun {
    var requests: Int
    var seconds: Double
    /// Microseconds.
    var p50: Double
    var p99: Double
    var max: Double
    var non2xx: Int
    var socketErrors: Int

    static func run(wrk: String, script: String, port: Int, seconds: Int, connections: Int, arguments: [String]) throws -> WrkRun {
        let process = Process(), out = Pipe()
        process.executableURL = URL(fileURLWithPath: wrk)
        process.arguments = ["-t2", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", script, "https://127.0.0.1:\(port)/companion/health", "--"] + arguments
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("WRK ") }) else {
            throw ValidationError("wrk printed no result: \(text)")
        }
        var fields: [String: Double] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=")
            if parts.count == 2 { fields[String(parts[0])] = Double(parts[1]) }
        }
        return WrkRun(requests: Int(fields["requests"] ?? 0), seconds: fields["seconds"] ?? 0, p50: fields["p50_us"] ?? 0,
                      p99: fields["p99_us"] ?? 0, max: fields["max_us"] ?? 0, non2xx: Int(fields["non2xx"] ?? 0),
                      socketErrors: Int(fields["socket_errors"] ?? 0))
    }
}

/// `vaultctl serve` started for a benchmark: its port from its first line, its peak RSS from /proc.
final class ServerProcess {
    let process = Process()
    private(set) var port = 0

    init(binary: String, arguments: [String], environment: [String: String] = [:]) throws {
        let out = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["TZ": "UTC"].merging(environment) { $1 }) { $1 }
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty || process.isRunning else { throw ValidationError("vaultctl serve did not start") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #":(\d+) "#, options: .regularExpression) else { throw ValidationError("no port in: \(text)") }
        port = Int(text[range].dropFirst().dropLast()) ?? 0
    }

    /// VmHWM of the server, in KiB.
    func peakKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// Clients posting as fast as their answers come back, each on one keep-alive connection.
struct LoadRun {
    let port: Int
    let pin: String
    let tokens: [String]
    let batch: Int
    let seconds: Double

    struct Result {
        var posts: Int
        var failures: Int
        var elapsed: Double
        var latencies: [Double]

        /// Milliseconds at quantile `q` (1 = the maximum).
        func percentile(_ q: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1000
        }
    }

    final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var latencies: [Double] = []
        var failures = 0
        func add(_ latency: Double?) { lock.withLock { if let latency { latencies.append(latency) } else { failures += 1 } } }
    }

    func run() throws -> Result {
        let tally = Tally()
        let finished = DispatchGroup()
        let warmUp = 1.0
        let started = Date().timeIntervalSinceReferenceDate
        let measuredFrom = started + warmUp, end = measuredFrom + seconds
        let (port, pin, batch) = (self.port, self.pin, self.batch)
        // A thread per client: each waits for its answer before its next post, as a phone does.
        for token in tokens {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                guard let client = try? CompanionClient(host: "127.0.0.1", port: port, pinnedSHA256: pin) else {
                    tally.add(nil)
                    return
                }
                defer { client.close() }
                var index = 1_000
                while Date().timeIntervalSinceReferenceDate < end {
                    let body = VaultBench.ServeBench.post(index: index, batch: batch)
                    index += 1
                    let sent = Date().timeIntervalSinceReferenceDate
                    let response = try? client.post("/companion/health", token: token, json: body)
                    let answered = Date().timeIntervalSinceReferenceDate
                    guard sent >= measuredFrom else { continue }
                    tally.add(response?.status == 201 ? answered - sent : nil)
                }
            }
        }
        finished.wait()
        return Result(posts: tally.latencies.count, failures: tally.failures, elapsed: seconds, latencies: tally.latencies)
    }
}
