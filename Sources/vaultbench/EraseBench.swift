import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// `vaultctl erase` of one category-month, as a user runs it, on a small vault and a large one
    /// in the same run: erasure should cost what it touches, not the vault's size. Anchors:
    /// `vaultctl verify` (reading the whole log once) on the large vault.
    struct EraseBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "erase",
            abstract: "Time `vaultctl erase` of one category-month on a small and a large vault.")

        @Option(help: "Days the large vault's generated export covers.") var days = 365
        @Option(help: "Days the small vault's export covers.") var smallDays = 100
        @Option(help: "Timed erasures on each vault (one month each); the median is reported.") var passes = 3
        @Option(help: "Work directory (exports are generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench erase: one category-month of heart data, on vaults of \(smallDays) and \(days) days, --kdf interactive")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let passphrase = "\(work)/erase-pass"
            try Data("erase bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            defer { try? FileManager.default.removeItem(atPath: passphrase) }
            var results: [(days: Int, times: [Double], logBytes: Int, verify: Double)] = []
            for size in [smallDays, days] {
                let zip = "\(work)/export-\(size)d-seed1-bundle.zip"
                if !FileManager.default.fileExists(atPath: zip) {
                    try SyntheticExport.writeZip(to: zip, options: .init(days: size, seed: 1))
                }
                let dir = "\(work)/vault-erase-\(size)"
                try? FileManager.default.removeItem(atPath: dir)
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let common = ["--vault", dir, "--passphrase-file", passphrase]
                try cli.run(["init", "--kdf", "interactive"] + common)
                try cli.run(["import", zip] + common)
                let logBytes = ((try FileManager.default.attributesOfItem(atPath: dir + "/events.log"))[.size] as? NSNumber)?.intValue ?? 0
                // Both exports start on 2024-01-01: each pass erases the next month of heart data.
                var times: [Double] = []
                for pass in 0..<passes {
                    let month = String(format: "2024-%02d", pass + 1)
                    times.append(try cli.time(["erase", "--categories", "heart", "--from", month, "--to", month, "--yes"] + common))
                }
                let verify = try cli.time(["verify"] + common)
                results.append((size, times, logBytes, verify))
            }
            print("")
            for r in results {
                print("erase      \(median(r.times).formatted(2)) s (median of \(passes): \(r.times.map { $0.formatted(2) }.joined(separator: ", "))) on the \(r.days)-day vault (\(grouped(r.logBytes)) B log)   target <= 1 s: \(median(r.times) <= 1 ? "met" : "NOT MET")")
            }
            let small = median(results[0].times), large = median(results[1].times)
            print("ratio      erase on the \(days)-day vault = \((large / small).formatted(2)) x the \(smallDays)-day vault's   target: independent of size (about 1 x)")
            print("anchor     vaultctl verify on the \(days)-day vault (reading the whole log once): \(results[1].verify.formatted(2)) s; erase = \((large / results[1].verify).formatted(2)) x verify")
        }
    }
}
