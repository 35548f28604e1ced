import Foundation
import Testing

/// What `vaultctl` prints from untrusted input cannot drive the terminal, a bundle from an
/// unchecked sender is not opened by default, and the process keeps its memory out of core
/// files (issue 15).
@Suite(.timeLimit(.minutes(10))) struct TerminalSafetyTests {
    let cli = CLIRunner()

    final class Vault {
        let dir = TemporaryDirectory("terminal")
        let path: String
        let pass: String
        init(_ cli: CLIRunner) throws {
            path = dir.path + "/vault"
            pass = dir.passphraseFile("pass", "terminal test passphrase")
            #expect(try cli.run(["init", "--kdf", "interactive", "--vault", path, "--passphrase-file", pass]).status == 0)
        }
        func args(_ arguments: [String]) -> [String] { arguments + ["--vault", path, "--passphrase-file", pass] }
    }

    @Test func sourceNamesWithEscapeSequencesArePrintedEscaped() throws {
        let v = try Vault(cli)
        let csv = v.dir.file("s.csv")
        try Data("type,start,end,value,unit,source\nsteps,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,12,count,\"Band\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}\u{9B}\nfake line\"\n".utf8)
            .write(to: URL(fileURLWithPath: csv))
        #expect(try cli.run(v.args(["import", csv])).status == 0)
        let sources = try cli.run(v.args(["sources"]))
        #expect(sources.status == 0, "\(sources.stderr)")
        #expect(sources.stdout.contains("Band\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}\\u{9b}\\u{a}fake line"), "\(sources.stdout)")
        #expect(!sources.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" || $0 == "\u{9B}" })
        #expect(!sources.stdout.split(separator: "\n").contains { $0.hasPrefix("fake line") })
        // JSON escapes what JSONEncoder leaves raw but a terminal acts on (C1, bidi).
        let json = try cli.run(v.args(["sources", "--json"]))
        #expect(json.status == 0 && json.stdout.contains("\\u009b") && json.stdout.contains("\\u202e"), "\(json.stdout)")
        #expect(!json.stdout.unicodeScalars.contains { $0 == "\u{9B}" || $0 == "\u{202E}" })
    }

    @Test func aBundleIsNotOpenedWithoutSayingWhoseItShouldBe() throws {
        let person = try Vault(cli), forger = try Vault(cli)
        let lab = person.dir.file("lab")
        #expect(try cli.run(["keygen", "--out", lab]).status == 0)
        for v in [person, forger] {
            #expect(try cli.run(v.args(["recipient", "add", "lab", "--key", lab + ".pub"])).status == 0)
            #expect(try cli.run(v.args(["grant", "lab", "--categories", "activity"])).status == 0)
        }
        let forged = person.dir.file("forged.bundle")
        #expect(try cli.run(forger.args(["export", "lab", "--out", forged])).status == 0)
        let fingerprint = try JSONSerialization.jsonObject(with: Data(try cli.run(person.args(["identity", "--json"])).stdout.utf8)) as! [String: String]

        let unchecked = try cli.run(["bundle", "open", forged, "--key", lab + ".key", "--out", person.dir.file("o1")])
        #expect(unchecked.status != 0 && unchecked.stderr.contains("--expect-sender FPR") && unchecked.stderr.contains("--any-sender"))
        let expected = try cli.run(["bundle", "open", forged, "--key", lab + ".key", "--out", person.dir.file("o2"), "--expect-sender", fingerprint["fingerprint"]!])
        #expect(expected.status != 0 && expected.stderr.contains("not the expected sender"), "\(expected.stderr)")
        let any = try cli.run(["bundle", "open", forged, "--key", lab + ".key", "--out", person.dir.file("o3"), "--any-sender", "--json"])
        let opened = try JSONSerialization.jsonObject(with: Data(any.stdout.utf8)) as! [String: Any]
        #expect(any.status == 0 && opened["senderVerified"] as? Bool == false && any.stderr.contains("sender not checked"))
        for out in ["o1", "o2"] { #expect(!FileManager.default.fileExists(atPath: person.dir.file(out))) }
    }

    @Test func aPassphraseFromTheEnvironmentIsWipedFromIt() throws {
        let v = try Vault(cli)
        // `import` of a FIFO opens it only after the passphrase was read and the vault opened:
        // once our end of the FIFO opens, the process is past that point.
        let fifo = v.dir.file("steps.csv")
        #expect(mkfifo(fifo, 0o600) == 0)
        var runner = cli
        runner.environment = ["HEALTHVAULT_PASSPHRASE": "terminal test passphrase", "HEALTHVAULT_DIR": v.path]
        let process = try runner.start(["import", fifo])
        let writer = FileHandle(forWritingAtPath: fifo)!
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/environ"))
        kill(process.processIdentifier, SIGKILL)
        try writer.close()
        process.waitUntilExit()
        #expect(environ.range(of: Data("terminal test passphrase".utf8)) == nil)
        #expect(environ.range(of: Data("HEALTHVAULT_DIR=".utf8)) != nil)
    }

    @Test func vaultctlWritesNoCoreFile() throws {
        let v = try Vault(cli)
        // The passphrase comes through a FIFO, so the process waits while its limits are read.
        let fifo = v.dir.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let process = try cli.start(["verify", "--vault", v.path, "--passphrase-file", fifo])
        let writer = FileHandle(forWritingAtPath: fifo)!
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        writer.write(Data("terminal test passphrase\n".utf8))
        try writer.close()
        process.waitUntilExit()
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(core.map { Array($0.suffix(3)) } == ["0", "0", "bytes"], "\(limits)")
        #expect(process.terminationStatus == 0)
    }
}
