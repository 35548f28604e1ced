import Foundation
import Projections
@testable import StudyStore
import Testing

/// A PostgreSQL study loads several bundles at once over several connections; a participant's
/// bundles still load in the order given.
@Suite(.timeLimit(.minutes(10))) struct StudyParallelLoadTests {
    let cli = CLIRunner()

    /// Four bundles from three people, one of them a withdrawal that follows the first, loaded
    /// in one command over two connections: the same rows as one connection into SQLite, and
    /// the withdrawal counted on the bundle that made it (so the first bundle loaded first).
    @Test func twoConnectionsLoadWhatOneDoesAndKeepAParticipantsOrder() throws {
        let dir = TemporaryDirectory("study-parallel")
        let server = try PostgresServer()
        let base = StudyLoadTests()
        #expect(try cli.run(["keygen", "--out", dir.file("lab")]).status == 0)
        let a = try base.participant(dir, "a", firstDay: (2024, 3, 1))
        let b = try base.participant(dir, "b", firstDay: (2024, 4, 28))
        let c = try base.participant(dir, "c", firstDay: (2024, 5, 30))
        #expect(try cli.run(a.args(["grant", "lab", "--categories", "activity,heart", "--granularity", "raw"])).status == 0)
        for p in [b, c] { #expect(try cli.run(p.args(["grant", "lab", "--categories", "activity", "--granularity", "raw"])).status == 0) }
        try base.export(a, dir.file("a1.bundle"))
        #expect(try cli.run(a.args(["revoke", "lab", "--categories", "heart"])).status == 0)
        try base.export(a, dir.file("a2.bundle"))
        try base.export(b, dir.file("b1.bundle"))
        try base.export(c, dir.file("c1.bundle"))
        let roster = dir.file("roster.csv")
        try Data("participant,fingerprint\nA,\(a.fingerprint)\nB,\(b.fingerprint)\nC,\(c.fingerprint)\n".utf8).write(to: URL(fileURLWithPath: roster))
        let lines = try ["a1", "b1", "c1"].map { try base.lines(of: dir.file($0 + ".bundle"), in: dir)["raw"]! }
        let bundles = ["a1", "a2", "b1", "c1"].map { dir.file($0 + ".bundle") }

        let postgres = StudyLoadTests.Study(url: server.url, sqlitePath: nil, server: server)
        let sqlite = StudyLoadTests.Study(url: "sqlite:" + dir.file("study.sqlite"), sqlitePath: dir.file("study.sqlite"), server: nil)
        var results: [[String: Any]] = []
        for study in [postgres, sqlite] {
            let run = try CLIRunner(environment: ["HEALTHVAULT_STUDY_CONNECTIONS": "2"]).run(
                ["study", "load"] + bundles + ["--key", dir.file("lab.key"), "--into", study.url, "--roster", roster, "--json"])
            #expect(run.status == 0, "\(run.stderr)")
            results.append((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:])
        }
        let fa = "'\(a.fingerprint)'"
        let heart = try postgres.count("SELECT coalesce(sum(rows), 0) FROM withdrawals WHERE fingerprint = \(fa) AND category = 'heart'")
        #expect(heart > 0)
        for json in results {
            #expect(json["bundles"] as? Int == 4 && json["participants"] as? Int == 3)
            #expect(json["rows"] as? Int == lines.reduce(0, +) && json["withdrawn"] as? Int == heart)
        }
        for study in [postgres, sqlite] {
            #expect(try study.count("SELECT count(*) FROM samples") == lines.reduce(0, +) - heart)
            #expect(try study.count("SELECT count(*) FROM samples WHERE category = 'heart'") == 0)
            #expect(try study.count("SELECT count(*) FROM bundles WHERE withdrawn > 0") == 1)
            // a2 added nothing (a1 held its activity) and withdrew the heart rows; loaded the other
            // way round, a2 would have added the activity and a1 withdrawn its own heart rows.
            #expect(try study.count("SELECT withdrawn FROM bundles WHERE fingerprint = \(fa) AND added = 0") == heart)
            #expect(try study.count("SELECT withdrawn FROM bundles WHERE fingerprint = \(fa) AND added = \(lines[0])") == 0)
        }
        // The same rows in both, row by row.
        let key = "fingerprint || ':' || line_hash || ':' || occurrence || ':' || bundle"
        let inPostgres = try server.psql("SELECT string_agg(\(key), ',' ORDER BY \(key)) FROM samples")
        let inSQLite = try SQLiteConnection(creatingPlainFile: dir.file("study.sqlite"))
            .scalarText("SELECT group_concat(k, ',') FROM (SELECT \(key) AS k FROM samples ORDER BY k COLLATE BINARY)")
        #expect(inPostgres.split(separator: ",").count == lines.reduce(0, +) - heart)
        let same = inPostgres == inSQLite
        #expect(same, "the two databases hold different rows")

        // A server that grants one connection where two are asked for: the load goes on with one.
        _ = try server.psql(["CREATE ROLE limited LOGIN CONNECTION LIMIT 1", "CREATE DATABASE limited OWNER limited"])
        let limited = try CLIRunner(environment: ["HEALTHVAULT_STUDY_CONNECTIONS": "2"]).run(
            ["study", "load"] + bundles + ["--key", dir.file("lab.key"), "--into", "postgres://limited@127.0.0.1:\(server.port)/limited?sslmode=disable",
                                          "--roster", roster, "--json"])
        #expect(limited.status == 0, "\(limited.stderr)")
        let one = (try? JSONSerialization.jsonObject(with: Data(limited.stdout.utf8)) as? [String: Any]) ?? [:]
        #expect(one["rows"] as? Int == lines.reduce(0, +) && one["withdrawn"] as? Int == heart)
    }

    /// The queue lets a bundle through only once every earlier bundle still loading is known to
    /// be from someone else.
    @Test func theQueueHoldsABundleBehindItsSendersEarlierOnes() async throws {
        let queue = BundleQueue(count: 4)
        #expect(await queue.claim() == 0)
        #expect(await queue.claim() == 1)
        #expect(await queue.claim() == 2)
        let passed = Passed()
        // Bundle 2 (from b) waits: 0 and 1 are not yet opened.
        let two = Task { try await queue.begin(2, sender: "b"); await passed.add(2) }
        try await waitUntil { await queue.waitingCount == 1 }
        // Bundle 0 is from a: goes straight on; 2 still waits for 1.
        try await queue.begin(0, sender: "a")
        let noneYet = await passed.list
        #expect(await queue.waitingCount == 1 && noneYet.isEmpty)
        // Bundle 1 is from a too: it waits for 0, and 2 (from b) may go.
        let one = Task { try await queue.begin(1, sender: "a"); await passed.add(1) }
        try await two.value
        try await waitUntil { await queue.waitingCount == 1 }
        #expect(await passed.list == [2])
        await queue.finish(0)
        try await one.value
        #expect(await passed.list == [2, 1])
        // Once stopped, a bundle waiting for its turn is abandoned and nothing more is handed out.
        #expect(await queue.claim() == 3)
        let three = Task { try await queue.begin(3, sender: "a") }
        try await waitUntil { await queue.waitingCount == 1 }
        await queue.stop(StudyError.badTarget("stopped by the test"))
        await #expect(throws: CancellationError.self) { try await three.value }
        let failure = await queue.failure
        #expect(await queue.claim() == nil)
        #expect(failure is StudyError)
    }

    private actor Passed {
        var list: [Int] = []
        func add(_ index: Int) { list.append(index) }
    }

    /// Polls `condition` up to 12,000 times, 10 ms apart: counted in polls, not wall time, because
    /// on 2 cores the tasks that make it true wait for a thread of the same pool, which other
    /// suites' blocking work can hold for minutes (a 2-minute wall-clock deadline failed that way
    /// in CI). The suite's time limit is the deadline against a hang.
    private func waitUntil(_ condition: () async -> Bool) async throws {
        for _ in 0..<12_000 {
            if await condition() { return }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        Issue.record("condition not reached in 12,000 polls")
    }
}
