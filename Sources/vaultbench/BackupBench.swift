import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// Issue 37's targets, measured as a person runs the commands: the first `vaultctl backup`
    /// of a vault of `days` generated days against `cp -r` of the same directory (and `cp -r` +
    /// `sync`, as durable as a backup); a backup after one companion post, beside `vaultctl backup
    /// list` (an open and unlock, no copy: a run needs them only when the key table changed); and
    /// how long `serve --backup` takes to ship a commit while 16 phones post, read from outside:
    /// the time from a head record appearing in the vault to the same bytes appearing in the
    /// backup's current state.
    struct BackupBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "backup",
            abstract: "Time `vaultctl backup` (first, after one post) against `cp -r`, and `serve --backup`'s lag under load (issue 37).")

        @Option(help: "Days the vault's generated export covers.") var days = 3650
        @Option(help: "Timed passes of the first backup and of cp -r; the median is reported.") var passes = 5
        @Option(help: "Concurrent phones posting while `serve --backup` ships.") var clients = 16
        @Option(help: "Seconds of load for the lag.") var seconds = 20.0
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench backup: a vault of \(days) generated days, --kdf interactive; destination on the same disk")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-bundle.zip"
            if !FileManager.default.fileExists(atPath: zip) { try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1)) }
            let passphrase = "\(work)/backup-pass", vault = "\(work)/vault-backup-\(days)", dest = "\(work)/backup-dest", copy = "\(work)/backup-cp"
            let post = "\(work)/backup-post.json"
            func clean() { for path in [vault, dest, copy, post] { try? FileManager.default.removeItem(atPath: path) } }
            clean()
            defer { clean(); try? FileManager.default.removeItem(atPath: passphrase) }
            try Data("backup bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            func args(_ command: [String]) -> [String] { command + ["--vault", vault, "--passphrase-file", passphrase] }
            try cli.run(args(["init", "--kdf", "interactive"]))
            try cli.run(args(["import", zip]))
            // The read models are not backed up (a restore rebuilds them); cp -r, the anchor,
            // copies them too.
            let copied = ["events.log", "events.head", "keys.sealed", "keyslot", "identity.sealed"].reduce(0) {
                $0 + (((try? FileManager.default.attributesOfItem(atPath: vault + "/" + $1))?[.size] as? NSNumber)?.intValue ?? 0)
            }
            let directoryBytes = try FileManager.default.subpathsOfDirectory(atPath: vault).reduce(0) {
                $0 + (((try? FileManager.default.attributesOfItem(atPath: vault + "/" + $1))?[.size] as? NSNumber)?.intValue ?? 0)
            }
            print("vault: \(days) days, \(directoryBytes / 1_000_000) MB in its directory (\(copied / 1_000_000) MB of them backed up; the read models are rebuilt)")

            var firstTimes: [Double] = [], copyTimes: [Double] = [], copySyncTimes: [Double] = []
            for _ in 0..<passes {
                try? FileManager.default.removeItem(atPath: copy)
                // Timed as vaultctl is (a process started from here, waited for): /usr/bin/time's
                // extra process and pipe would add to the anchor's time alone.
                copyTimes.append(try VaultctlProcess("/bin/cp").time(["-r", vault, copy]))
                try? FileManager.default.removeItem(atPath: copy)
                copySyncTimes.append(try VaultctlProcess("/bin/sh").time(["-c", "cp -r '\(vault)' '\(copy)' && sync"]))
                // A new backup each pass, in a folder made for it (a destination gone since its last
                // run is refused as an unmounted disk).
                try? FileManager.default.removeItem(atPath: dest)
                try FileManager.default.createDirectory(atPath: dest, withIntermediateDirectories: true)
                firstTimes.append(try cli.time(args(["backup", dest])))
            }
            let first = median(firstTimes), cp = median(copyTimes), cpSync = median(copySyncTimes)
            print("")
            print("first backup   \(first.formatted(3)) s (whole command, median of \(passes)); cp -r \(cp.formatted(3)) s, cp -r + sync \(cpSync.formatted(3)) s")
            print("               ratio \((first / cp).formatted(2))x cp -r, \((first / cpSync).formatted(2))x cp -r + sync (target <= 1.5x cp -r; "
                  + "the backup is durable when it exits, as cp -r + sync is)")

            // One companion post's commit (the same path as `serve`'s: a Yappi batch of 24 minutes), then a backup.
            try Data(ServeBench.post(index: 0, batch: 24).utf8).write(to: URL(fileURLWithPath: post))
            let logBefore = try size(vault + "/events.log")
            try cli.run(args(["import", post]))
            let newFrames = try size(vault + "/events.log") - logBefore
            let small = try ["events.head", "keys.sealed", "keyslot", "identity.sealed"].reduce(0) { $0 + (try size(vault + "/" + $1)) }
            let start = Date()
            let output = try cli.output(args(["backup", dest, "--json"]))
            let incremental = Date().timeIntervalSince(start)
            let written = ((try JSONSerialization.jsonObject(with: output) as? [String: Any])?["bytesWritten"] as? Int) ?? -1
            var listTimes: [Double] = []
            for _ in 0..<passes { listTimes.append(try cli.time(args(["backup", "list"]))) }
            let list = median(listTimes)
            print("after 1 post   \((incremental * 1000).formatted(0)) ms whole command (target <= 100 ms); `backup list` (an open and unlock, no copy) "
                  + "\((list * 1000).formatted(0)) ms")
            print("               \(written) bytes written for \(newFrames) bytes of new frames and \(small) of small files: "
                  + "\((Double(written) / Double(2 * newFrames + small)).formatted(2)) of the target's 2x frames + small files")

            // serve --backup under load, its lag read from outside.
            try? FileManager.default.removeItem(atPath: dest)
            try FileManager.default.createDirectory(atPath: dest, withIntermediateDirectories: true)
            var tokens: [String] = [], pin = ""
            for c in 0..<clients {
                let paired = try cli.output(args(["companion", "pair", "backup bench phone \(c)", "--json"]))
                let object = try JSONSerialization.jsonObject(with: paired) as? [String: String] ?? [:]
                tokens.append(object["token"] ?? "")
                pin = object["certSHA256"] ?? ""
            }
            let server = try ServerProcess(binary: cli.binary, arguments: args(["serve", "--listen", "127.0.0.1:0", "--backup", dest]))
            defer { server.stop() }
            let watcher = LagWatcher(vault: vault, destination: dest)
            watcher.start()
            let load = try LoadRun(port: server.port, pin: pin, tokens: tokens, batch: 24, seconds: seconds).run()
            // The last commits ship too: wait up to 10 s more for them.
            let lags = watcher.stop(after: 10)
            let shipped = lags.count, sorted = lags.sorted()
            func quantile(_ q: Double) -> Double { sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
            print("serve --backup \(clients) phones, \((Double(load.posts) / load.elapsed).formatted(0)) posts/s (p99 \(load.percentile(0.99).formatted(0)) ms); "
                  + "\(shipped) commits seen in the vault's head, \(watcher.waiting) not in the backup 10 s after the load")
            print("               lag from a commit in the vault to a backup holding it: p50 \(quantile(0.5).formatted(2)) s, p99 \(quantile(0.99).formatted(2)) s, "
                  + "max \(quantile(1).formatted(2)) s (target p99 <= 5 s)")
        }


        func size(_ path: String) throws -> Int { ((try FileManager.default.attributesOfItem(atPath: path))[.size] as? NSNumber)?.intValue ?? 0 }

    }
}

/// Polls the vault's head record and the backup's current head every 20 ms, reading the event
/// count each names (a plaintext field of the head record, docs/log-format.md): each count the
/// vault reached gets the moment it was first seen, and a lag when the backup first holds at least
/// as many events.
final class LagWatcher: @unchecked Sendable {
    let vault: String
    let destination: String
    private let lock = NSLock()
    private var running = true
    private var firstSeen: [(count: UInt64, at: Date)] = []
    private var lags: [Double] = []
    private var shippedCount: UInt64 = 0
    private let finished = DispatchSemaphore(value: 0)

    init(vault: String, destination: String) {
        self.vault = vault
        self.destination = destination
    }

    /// Event counts seen in the vault, and how many of them are not in the backup yet.
    var seen: Int { lock.withLock { firstSeen.count + lags.count } }
    var waiting: Int { lock.withLock { firstSeen.count } }

    func start() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                poll()
                usleep(20_000)
            }
            finished.signal()
        }
    }

    /// Stops once the backup holds every count seen, or after `seconds`; the lags.
    func stop(after seconds: Double) -> [Double] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, lock.withLock({ !firstSeen.isEmpty }) { usleep(50_000) }
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { lags }
    }

    /// The event count a head record's bytes name (bytes 36..<44, little-endian).
    static func eventCount(_ path: String) -> UInt64? {
        guard let bytes = FileManager.default.contents(atPath: path), bytes.count >= 44 else { return nil }
        return bytes[36..<44].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    private func poll() {
        let now = Date()
        let vaultCount = Self.eventCount(vault + "/events.head")
        var backupCount: UInt64?
        if let current = FileManager.default.contents(atPath: destination + "/CURRENT").map({ String(decoding: $0, as: UTF8.self) }),
           let state = current.split(separator: " ").first {
            backupCount = Self.eventCount(destination + "/" + state + "/events.head")
        }
        lock.withLock {
            if let vaultCount, vaultCount > (firstSeen.last?.count ?? shippedCount) { firstSeen.append((vaultCount, now)) }
            if let backupCount, backupCount > shippedCount {
                shippedCount = backupCount
                while let first = firstSeen.first, first.count <= backupCount {
                    lags.append(now.timeIntervalSince(first.at))
                    firstSeen.removeFirst()
                }
            }
        }
    }
}
