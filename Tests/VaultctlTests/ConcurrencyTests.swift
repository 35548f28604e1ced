import Foundation
import SyntheticHealth
import Testing

/// Two writers at once, and readers while a writer works, as separate processes.
@Suite(.timeLimit(.minutes(10))) struct ConcurrencyTests {
    let cli = CLIRunner()

    @Test func twoImportsAtOnceOneWaitsOutOrFailsCleanlyAndNothingIsCountedTwice() throws {
        let dir = TemporaryDirectory("concurrency")
        let vault = dir.path + "/vault", pass = dir.passphraseFile("p", "concurrency passphrase")
        let zip = dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 8, firstDay: (2024, 2, 1), tripStart: 100))
        let common = ["--vault", vault, "--passphrase-file", pass]
        try makeVault(at: vault, passphraseFile: pass)
        for _ in 0..<3 {
            let errA = Pipe(), errB = Pipe()
            let a = try cli.start(["import", zip] + common, stderr: errA)
            let b = try cli.start(["import", zip] + common, stderr: errB)
            a.waitUntilExit()
            b.waitUntilExit()
            for (process, err) in [(a, errA), (b, errB)] where process.terminationStatus != 0 {
                let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(message.contains("another process is writing"), "\(message)")
                #expect(message.split(separator: "\n").count == 1)
            }
        }
        #expect(try cli.run(["verify"] + common).status == 0)
        let again = try cli.run(["import", zip, "--json"] + common)
        let report = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as! [String: Any]
        #expect(report["added"] as? Int == 0)
        let history = try JSONSerialization.jsonObject(with: Data(try cli.run(["history", "--json"] + common).stdout.utf8)) as! [[String: Any]]
        let added = history.filter { $0["kind"] as? String == "import" }.compactMap { ($0["detail"] as? [String: String])?["added"] }.compactMap(Int.init)
        #expect(added.filter { $0 > 0 }.count == 1, "\(added)")
    }

    @Test func readersAreNeverBlockedAndSeeACommittedState() throws {
        let dir = TemporaryDirectory("readers")
        let vault = dir.path + "/vault", pass = dir.passphraseFile("p", "readers passphrase")
        let zip = dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 12, firstDay: (2024, 2, 1), tripStart: 100))
        let common = ["--vault", vault, "--passphrase-file", pass]
        try makeVault(at: vault, passphraseFile: pass)
        let writer = try cli.start(["import", zip] + common)
        var reads = 0
        var dayCounts: [Int] = []
        while writer.isRunning || reads < 3 {
            let verify = try cli.run(["verify", "--json"] + common)
            #expect(verify.status == 0, "\(verify.stderr)")
            let rings = try cli.run(["rings", "--json"] + common)
            #expect(rings.status == 0, "\(rings.stderr)")
            // All or nothing: the import is one commit.
            let days = (try JSONSerialization.jsonObject(with: Data(rings.stdout.utf8)) as? [Any])?.count ?? -1
            dayCounts.append(days)
            reads += 1
        }
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        #expect(dayCounts.allSatisfy { $0 == 0 || $0 == 12 }, "\(dayCounts)")
        #expect(dayCounts.last == 12)
    }
}
