import ArgumentParser
import Foundation
import SyntheticHealth
import Vault

extension VaultBench {
    /// `vaultctl passwd --rekey` on a vault holding a generated export, as a user runs it (the
    /// whole command, a process per pass), against `vaultctl passwd` (the key derivations alone)
    /// and `vaultctl verify` (reading and authenticating the whole log) in the same run.
    struct RekeyBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rekey",
            abstract: "Time `vaultctl passwd --rekey` against `passwd` and `verify` on the same vault.")

        @Option(help: "Days the generated export covers.") var days = 365
        @Option(help: "Timed passes of each command; the median is reported.") var passes = 3
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench rekey: a vault holding a generated export of \(days) days, --kdf interactive")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-bundle.zip"
            if !FileManager.default.fileExists(atPath: zip) {
                try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1))
            }
            let dir = "\(work)/vault-rekey"
            try? FileManager.default.removeItem(atPath: dir)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let passphrases = ["\(work)/rekey-p0", "\(work)/rekey-p1"]
            for (i, path) in passphrases.enumerated() { try Data("rekey bench passphrase \(i)\n".utf8).write(to: URL(fileURLWithPath: path)) }
            defer { for path in passphrases { try? FileManager.default.removeItem(atPath: path) } }
            try cli.run(["init", "--kdf", "interactive", "--vault", dir, "--passphrase-file", passphrases[0]])
            try cli.run(["import", zip, "--vault", dir, "--passphrase-file", passphrases[0]])
            let logBytes = ((try FileManager.default.attributesOfItem(atPath: dir + "/events.log"))[.size] as? NSNumber)?.intValue ?? 0

            var current = 0
            var rekeyTimes: [Double] = [], passwdTimes: [Double] = [], verifyTimes: [Double] = []
            for _ in 0..<passes {
                verifyTimes.append(try cli.time(["verify", "--vault", dir, "--passphrase-file", passphrases[current]]))
                passwdTimes.append(try cli.time(["passwd", "--vault", dir, "--passphrase-file", passphrases[current],
                                                     "--new-passphrase-file", passphrases[1 - current]]))
                current = 1 - current
                rekeyTimes.append(try cli.time(["passwd", "--rekey", "--vault", dir, "--passphrase-file", passphrases[current],
                                                    "--new-passphrase-file", passphrases[1 - current]]))
                current = 1 - current
            }
            try cli.run(["verify", "--vault", dir, "--passphrase-file", passphrases[current]])
            let rekey = median(rekeyTimes), passwd = median(passwdTimes), verify = median(verifyTimes)
            print("")
            print("passwd --rekey  \(rekey.formatted(2)) s (median of \(passes): \(rekeyTimes.map { $0.formatted(2) }.joined(separator: ", "))) for a \(grouped(logBytes)) B log")
            print("anchor          vaultctl passwd (the key derivations, no rewrite): \(passwd.formatted(2)) s; rekey costs \((rekey - passwd).formatted(2)) s more")
            print("anchor          vaultctl verify (reading and authenticating the whole log once): \(verify.formatted(2)) s; rekey = \((rekey / verify).formatted(2)) x verify")
        }
    }
}
