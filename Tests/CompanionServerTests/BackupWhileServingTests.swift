import CompanionClient
import Foundation
import Testing
import TestSupport

/// Backups of a vault that `serve` writes to (issue 37): a backup taken while a phone posts
/// restores to a vault that verifies and holds every post acknowledged before the backup began;
/// `serve --backup DEST` ships each commit without a command being run.
@Suite(.serialized, .timeLimit(.minutes(10))) struct BackupWhileServingTests {
    /// Posts one STEPS sample of 1 step in minute `i` of 2025-03-01 (each post its own sample).
    static func post(_ client: CompanionClientBox, token: String, minute i: Int) throws -> Bool {
        let start = String(format: "2025-03-01 %02d:%02d", i / 60, i % 60), end = String(format: "2025-03-01 %02d:%02d", (i + 1) / 60 % 24, (i + 1) % 60)
        return try client.client.post("/companion/health", token: token, json: yappi("STEPS", [("\(start)/\(end)", 1)])).status == 201
    }

    final class CompanionClientBox: @unchecked Sendable {
        let client: CompanionClient
        init(_ client: CompanionClient) { self.client = client }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        var count: Int { lock.withLock { value } }
        func add() { lock.withLock { value += 1 } }
    }

    static func stepsOn(_ cli: CLIRunner, vault: String, passFile: String) throws -> Double {
        let result = try cli.run(["summary", "steps", "--by", "day", "--from", "2025-03-01", "--to", "2025-03-01", "--json", "--vault", vault,
                                  "--passphrase-file", passFile])
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        return rows.first?["value"] as? Double ?? 0
    }

    @Test func aBackupTakenWhileAPhonePostsHoldsEveryPostAcknowledgedBeforeIt() throws {
        let s = try ServedVault()
        let (token, cert) = try s.pair("phone")
        try s.start()
        let client = CompanionClientBox(try s.client(pin: cert))
        let acknowledged = Counter()
        let posting = DispatchGroup()
        posting.enter()
        Thread {
            for minute in 0..<300 where (try? Self.post(client, token: token, minute: minute)) == true { acknowledged.add() }
            posting.leave()
        }.start()
        // Counted polls, not wall time: on two busy cores the poster may start late.
        var polls = 0
        while acknowledged.count < 30, polls < 6000 { usleep(10_000); polls += 1 }
        let before = acknowledged.count
        #expect(before >= 30)
        let destination = s.directory.file("backup")
        let backup = try s.run(["backup", destination, "--json"])
        #expect(backup.status == 0, "\(backup.stderr)")
        posting.wait()
        #expect(acknowledged.count == 300)
        _ = s.stop()
        let restored = s.directory.file("restored")
        let restore = try s.cli.run(["restore", destination, "--to", restored, "--vault", s.vault, "--passphrase-file", s.passFile])
        #expect(restore.status == 0, "\(restore.stderr)")
        let held = try Self.stepsOn(s.cli, vault: restored, passFile: s.passFile)
        #expect(held >= Double(before) && held <= 300, "the backup holds \(held) posts; \(before) were acknowledged before it began")
        #expect(try s.cli.run(["verify", "--vault", restored, "--passphrase-file", s.passFile]).status == 0)
    }

    @Test func serveWithBackupShipsEveryCommitWithoutACommand() throws {
        let s = try ServedVault()
        let (token, cert) = try s.pair("phone")
        let destination = s.directory.file("backup")
        try s.start(arguments: ["--backup", destination])
        let client = CompanionClientBox(try s.client(pin: cert))
        for minute in 0..<5 { #expect(try Self.post(client, token: token, minute: minute)) }
        // The backup catches up with the vault by itself (the shipper looks every second).
        func events(_ arguments: [String]) throws -> Int {
            let result = try s.cli.run(arguments + ["--json", "--passphrase-file", s.passFile])
            return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["events"] as? Int ?? -1
        }
        let target = try events(["verify", "--vault", s.vault])
        var shipped = -1, polls = 0
        let started = Date()
        while shipped < target, polls < 120 {
            shipped = try events(["backup", "verify", destination, "--vault", s.vault])
            if shipped < target { usleep(250_000) }
            polls += 1
        }
        #expect(shipped == target, "the backup holds \(shipped) events of \(target) after \(Date().timeIntervalSince(started)) s")
        // The last posts are shipped when the server stops, too.
        for minute in 5..<8 { #expect(try Self.post(client, token: token, minute: minute)) }
        _ = s.stop()
        let restored = s.directory.file("restored")
        let restore = try s.cli.run(["restore", destination, "--to", restored, "--vault", s.vault, "--passphrase-file", s.passFile])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(try Self.stepsOn(s.cli, vault: restored, passFile: s.passFile) == 8)
        let list = try s.run(["backup", "list", "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(rows.count == 1 && rows.first?["holdsErasedKeys"] as? Bool == false, "\(list.stdout)")
    }
}
