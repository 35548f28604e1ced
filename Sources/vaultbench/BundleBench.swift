import ArgumentParser
import Envelope
import EventLog
import Foundation
import HealthModel
import Projections
import ResearchBundle
import SyntheticHealth
import Vault

extension VaultBench {
    /// Export of a year of raw activity samples to a researcher, and the researcher opening it.
    struct BundleBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bundle",
            abstract: "Export a year of raw activity samples as a bundle and open it; against decoding the log and hashing the file.")

        @Option(help: "Days the generated export covers.") var days = 365
        @Option(help: "Timed passes; the median is reported.") var passes = 3
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"

        func run() throws {
            print("vaultbench bundle: raw activity of a generated export of \(days) days")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-bundle.zip"
            if !FileManager.default.fileExists(atPath: zip) {
                try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1))
            }
            let dir = "\(work)/vault-bundle", researcher = "\(work)/researcher"
            for path in [dir, researcher] { try? FileManager.default.removeItem(atPath: path) }
            defer { for path in [dir, researcher] { try? FileManager.default.removeItem(atPath: path) } }
            try FileManager.default.createDirectory(atPath: researcher, withIntermediateDirectories: true)
            var pp = Array("bench passphrase".utf8)
            let passphrase = Passphrase(consuming: &pp)
            do {
                let vault = try Vault.create(at: dir, passphrase: passphrase, kdf: KDFPreset.interactive.parameters, kdfName: "interactive")
                _ = try vault.importFiles([zip])
                _ = try vault.projections()
                try RecipientKeyFiles.generate(prefix: researcher + "/lab")
                try vault.addRecipient(name: "lab", publicKeyFile: researcher + "/lab.pub")
                try vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .raw, expires: nil, purpose: "benchmark")
            }
            let vault = try Vault.open(at: dir, passphrase: passphrase, mode: .readWrite)

            var anchorTimes: [Double] = [], exportTimes: [Double] = [], openTimes: [Double] = [], hashTimes: [Double] = []
            var summary: ExportSummary?
            for pass in 0..<passes {
                let (_, anchor) = try measure {
                    var n = 0
                    try vault.forEachEvent { _, _ in n += 1 }
                    return n
                }
                anchorTimes.append(anchor)
                let bundle = "\(researcher)/b\(pass).bundle", out = "\(researcher)/out\(pass)"
                let (s, exportTime) = try measure { try vault.export(to: "lab", path: bundle) }
                summary = s
                exportTimes.append(exportTime)
                let (_, hashTime) = try measure {
                    let d = Digest()
                    d.update(Array(try Data(contentsOf: URL(fileURLWithPath: bundle))))
                    return d.finish()
                }
                hashTimes.append(hashTime)
                let (_, openTime) = try measure { try BundleReader.open(bundle, keyFile: researcher + "/lab.key", outputDirectory: out) }
                openTimes.append(openTime)
                try? FileManager.default.removeItem(atPath: out)
                try? FileManager.default.removeItem(atPath: bundle)
            }
            let lines = summary?.counts["activity"] ?? 0
            let exportTime = median(exportTimes), openTime = median(openTimes)
            print("")
            print("export      \(exportTime.formatted(2)) s (median of \(passes): \(exportTimes.map { $0.formatted(2) }.joined(separator: ", "))) for \(grouped(lines)) raw activity lines, \(grouped(summary?.bytes ?? 0)) B bundle   target <= 2 s: \(exportTime <= 2 ? "met" : "NOT MET")")
            print("open        \(openTime.formatted(2)) s (median of \(passes): \(openTimes.map { $0.formatted(2) }.joined(separator: ", "))) to check key, chunks, signature and hashes, then write the files   target <= 2 s: \(openTime <= 2 ? "met" : "NOT MET")")
            print("anchor      decoding the whole log with nothing exported: \(median(anchorTimes).formatted(2)) s; export = \((exportTime / median(anchorTimes)).formatted(2)) x the anchor")
            print("anchor      reading and BLAKE2b-hashing the bundle file: \(median(hashTimes).formatted(2)) s; open = \((openTime / median(hashTimes)).formatted(2)) x the anchor")
            try measureOpenAsAUserRunsIt(vault: vault, researcher: researcher)
        }

        /// `vaultctl bundle open` as a process on the year's bundle and on a one-day bundle: its
        /// peak memory does not grow with the bundle (the reader streams). `vaultctl keygen` is the
        /// process's own floor.
        private func measureOpenAsAUserRunsIt(vault: Vault, researcher: String) throws {
            let vaultctl = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vaultctl").path
            guard FileManager.default.isExecutableFile(atPath: vaultctl) else {
                print("memory      skipped: no vaultctl beside vaultbench (swift build -c release --product vaultctl)")
                return
            }
            let year = "\(researcher)/year.bundle", day = "\(researcher)/day.bundle"
            _ = try vault.export(to: "lab", path: year)
            try vault.grant(recipient: "lab", categories: [.activity], from: LocalDay(year: 2024, month: 1, day: 1),
                            to: LocalDay(year: 2024, month: 1, day: 1), granularity: .daily, expires: nil, purpose: "benchmark")
            _ = try vault.export(to: "lab", path: day)
            var rows: [String] = []
            for (label, bundle) in [("year", year), ("one day", day)] {
                let bytes = ((try FileManager.default.attributesOfItem(atPath: bundle))[.size] as? NSNumber)?.intValue ?? 0
                guard let (seconds, kib) = try timedProcess(vaultctl, ["bundle", "open", bundle, "--key", researcher + "/lab.key",
                                                                       "--out", researcher + "/open-\(label)", "--any-sender"]) else { throw ExitCode.failure }
                rows.append("memory      vaultctl bundle open, \(label) (\(grouped(bytes)) B bundle): \(seconds.formatted(2)) s, \((kib / 1024).formatted(1)) MiB peak RSS")
            }
            guard let (_, floor) = try timedProcess(vaultctl, ["keygen", "--out", researcher + "/floor"]) else { throw ExitCode.failure }
            rows.forEach { print($0) }
            print("anchor      vaultctl keygen (the process with nothing to read): \((floor / 1024).formatted(1)) MiB peak RSS")
        }
    }
}
