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
            try makeVault(at: path, passphraseFile: pass)
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

    /// Read from outside, as root: `vaultctl` is not dumpable, so no other user (not even its
    /// own) may read its `environ` (`vaultctlIsNotDumpable` shows that part for any user).
    @Test(.enabled(if: getuid() == 0, "only root may read a non-dumpable process's /proc/PID/environ"))
    func aPassphraseFromTheEnvironmentIsWipedFromIt() throws {
        let v = try Vault(cli)
        // `import` of a FIFO opens it only after the passphrase was read and the vault opened:
        // once our end of the FIFO opens, the process is past that point.
        let fifo = v.dir.file("steps.csv")
        #expect(mkfifo(fifo, 0o600) == 0)
        var runner = cli
        runner.environment = ["HEALTHVAULT_PASSPHRASE": "terminal test passphrase", "HEALTHVAULT_DIR": v.path]
        let process = try runner.start(["import", fifo])
        let writer = try #require(Deadline.openFIFOForWriting(fifo, seconds: 120), "no reader opened the FIFO")
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/environ"))
        kill(process.processIdentifier, SIGKILL)
        try writer.close()
        process.waitUntilExit()
        #expect(environ.range(of: Data("terminal test passphrase".utf8)) == nil)
        #expect(environ.range(of: Data("HEALTHVAULT_DIR=".utf8)) != nil)
    }

    /// The threat model's "the vault directory is 0700, files 0600" for every file a vault in use
    /// holds, not only those `init` makes: after imports, goals, trackers, consent, an export, a
    /// pairing, a rekey, an erase and a rebuild, under the usual umask (022, which leaves new files
    /// readable by all unless the code says otherwise).
    @Test func everyFileOfAVaultInUseIsPrivate() throws {
        let v = try Vault(cli)
        let runner = cli
        let previous = umask(0o022)
        defer { umask(previous) }
        let zip = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/apple-health/alxdrcirilo/export.zip").path
        let lab = v.dir.file("lab")
        for command in [["import", zip], ["goals", "set", "move", "500"],
                        ["tracker", "add", "NoAlc", "--levels", "steady=0,wild=6", "--success", "steady"], ["track", "NoAlc", "steady"],
                        ["recipient", "add", "Lab", "--key", lab + ".pub"], ["grant", "Lab", "--categories", "activity", "--granularity", "daily"],
                        ["export", "Lab", "--out", v.dir.file("b.bundle")], ["passwd", "--rekey", "--new-passphrase-file", v.pass],
                        ["companion", "pair", "phone"], ["erase", "--categories", "heart", "--yes"], ["rebuild"], ["summary", "steps"]] {
            if command[0] == "recipient" { #expect(try runner.run(["keygen", "--out", lab]).status == 0) }
            let result = try runner.run(v.args(command))
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        var seen = 0
        let walker = FileManager.default.enumerator(atPath: v.path)!
        while let name = walker.nextObject() as? String {
            let attributes = try FileManager.default.attributesOfItem(atPath: v.path + "/" + name)
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
            let isDirectory = attributes[.type] as? FileAttributeType == .typeDirectory
            #expect(mode == (isDirectory ? 0o700 : 0o600), "\(name): \(String(mode, radix: 8))")
            seen += 1
        }
        let top = (try FileManager.default.attributesOfItem(atPath: v.path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(top == 0o700)
        // Every file a vault holds at rest (README's layout), each looked at above.
        let names = try FileManager.default.subpathsOfDirectory(atPath: v.path)
        // `passwd --rekey` holds the list of backups' lock (docs/log-format.md), and so made it.
        #expect(Set(names) == ["backups.pub", "backups.sealed.lock", "events.head", "events.lock", "events.log", "frames.index", "identity.sealed", "keys.sealed",
                               "keyslot", "projections.db", "server-tls.sealed"])
        #expect(seen == names.count)
    }

    /// The threat model's "not dumpable" (`PR_SET_DUMPABLE` 0), seen from outside the process: a
    /// program of the same user cannot read a non-dumpable process's `/proc/PID/environ` (the
    /// kernel's ptrace access check). As root, both run as `nobody` (util-linux `setpriv`), with a
    /// `cat` run the same way as the anchor whose `environ` that user can read.
    @Test func vaultctlIsNotDumpable() throws {
        let v = try Vault(cli)
        let fifo = v.dir.file("pass-fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let asRoot = getuid() == 0
        let nobody: UInt32 = 65_534
        if asRoot {
            for path in [v.dir.path, v.path, fifo] + (try FileManager.default.subpathsOfDirectory(atPath: v.path)).map({ v.path + "/" + $0 }) {
                #expect(chown(path, nobody, nobody) == 0, "\(path)")
            }
        }
        let asUser = asRoot ? ["/usr/bin/setpriv", "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups"] : []
        func environReadable(_ arguments: [String]) throws -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: (asUser + arguments)[0])
            process.arguments = Array((asUser + arguments).dropFirst())
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Both block on opening the FIFO for reading until it is opened here.
            let writer = try #require(Deadline.openFIFOForWriting(fifo, seconds: 120), "no reader opened the FIFO: \(arguments[0])")
            let reader = Process()
            reader.executableURL = URL(fileURLWithPath: (asUser + ["/usr/bin/head"])[0])
            reader.arguments = Array((asUser + ["/usr/bin/head", "-c", "1", "/proc/\(process.processIdentifier)/environ"]).dropFirst())
            reader.standardOutput = FileHandle.nullDevice
            reader.standardError = FileHandle.nullDevice
            try reader.run()
            #expect(Deadline.wait(for: reader, seconds: 60))
            try writer.close()
            kill(process.processIdentifier, SIGKILL)
            Deadline.wait(for: process, seconds: 60)
            return reader.terminationStatus == 0
        }
        #expect(try environReadable(["/usr/bin/cat", fifo]))
        #expect(try !environReadable([CLIRunner.binary.path, "verify", "--vault", v.path, "--passphrase-file", fifo]))
    }

    @Test func vaultctlWritesNoCoreFile() throws {
        let v = try Vault(cli)
        // The passphrase comes through a FIFO, so the process waits while its limits are read.
        let fifo = v.dir.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let process = try cli.start(["verify", "--vault", v.path, "--passphrase-file", fifo])
        let writer = try #require(Deadline.openFIFOForWriting(fifo, seconds: 120), "no reader opened the FIFO")
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        writer.write(Data("terminal test passphrase\n".utf8))
        try writer.close()
        process.waitUntilExit()
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(core.map { Array($0.suffix(3)) } == ["0", "0", "bytes"], "\(limits)")
        #expect(process.terminationStatus == 0)
    }
}
