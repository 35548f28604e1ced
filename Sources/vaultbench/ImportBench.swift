import ArgumentParser
import EventLog
import Foundation
import SyntheticHealth
import Vault

extension VaultBench {
    /// Import of a generated one-year export against healthkit-to-sqlite on the same zip.
    struct ImportBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import a generated export (first and again), against healthkit-to-sqlite on the same zip.")

        @Option(help: "Days the generated export covers.") var days = 365
        @Option(help: "Imports to time; the median is reported.") var passes = 3
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "healthkit-to-sqlite executable to run as the anchor (skipped when absent).") var anchor: String?
        @Option(help: "The vaultctl binary for the whole command's row (default: beside this one).") var vaultctl: String?

        func run() throws {
            print("vaultbench import: generated export of \(days) days")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            // The anchor's XML parser stops at iOS 16's broken DTD, so the shared zip has it closed;
            // the tests cover the broken one.
            let zip = "\(work)/export-\(days)d-seed1-closed-dtd.zip"
            if !FileManager.default.fileExists(atPath: zip) {
                let summary = try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1, iOS16DTDBug: false))
                print("generated \(zip): \(grouped(summary.records)) records, \(summary.xmlBytes / 1_000_000) MB of XML")
            }
            let zipBytes = (try FileManager.default.attributesOfItem(atPath: zip)[.size] as? NSNumber)?.int64Value ?? 0

            var firstTimes: [Double] = [], againTimes: [Double] = [], peaks: [Double] = []
            var report = ImportReport(), again = ImportReport()
            var vaultBytes: Int64 = 0
            for pass in 0..<passes {
                let dir = "\(work)/vault-\(pass)"
                try? FileManager.default.removeItem(atPath: dir)
                var pp = Array("bench passphrase".utf8)
                let passphrase = Passphrase(consuming: &pp)
                _ = try Vault.create(at: dir, passphrase: passphrase, kdf: KDFPreset.interactive.parameters, kdfName: "interactive")
                // Timed from an unlocked vault: Argon2id's memory and time are not the import's.
                let vault = try Vault.open(at: dir, passphrase: passphrase, mode: .readWrite)
                Machine.resetPeakRSS()
                let (r, first) = try measure { try vault.importFiles([zip]) }
                peaks.append(Machine.peakRSSMiB)
                let (a, second) = try measure { try vault.importFiles([zip]) }
                firstTimes.append(first)
                againTimes.append(second)
                report = r
                again = a
                vaultBytes = try FileManager.default.contentsOfDirectory(atPath: dir).reduce(Int64(0)) {
                    $0 + ((try FileManager.default.attributesOfItem(atPath: dir + "/" + $1)[.size] as? NSNumber)?.int64Value ?? 0)
                }
                try? FileManager.default.removeItem(atPath: dir)
            }
            let first = median(firstTimes), second = median(againTimes)
            print("")
            print("import      \(first.formatted(2)) s (median of \(passes): \(firstTimes.map { $0.formatted(2) }.joined(separator: ", "))), \(grouped(report.added)) added, \(report.rejected) rejected, \(grouped(Int(Double(report.added) / first))) records/s")
            print("re-import   \(second.formatted(2)) s (median of \(passes): \(againTimes.map { $0.formatted(2) }.joined(separator: ", "))), \(again.added) added, \(grouped(again.duplicates)) duplicates; \((second / first).formatted(2)) x the first import")
            print("memory      \(peaks.max()!.formatted(0)) MiB peak RSS during the import (high-water mark reset after unlocking; Argon2id interactive itself takes 64 MiB)   target <= 100 MiB: \(peaks.max()! <= 100 ? "met" : "NOT MET")")
            let perSample = Double(vaultBytes) / Double(report.added)
            print("size        \(grouped(Int(vaultBytes))) B vault for \(grouped(report.added)) samples: \(perSample.formatted(1)) B per sample (zip \(grouped(Int(zipBytes))) B)   target <= 32 B: \(perSample <= 32 ? "met" : "NOT MET")")

            try wholeCommandAgainstInflating(zip)

            guard let anchor else {
                print("anchor      skipped (pass --anchor PATH-TO-healthkit-to-sqlite)")
                return
            }
            let db = "\(work)/anchor.db"
            try? FileManager.default.removeItem(atPath: db)
            guard let (seconds, kb) = try timedProcess(anchor, [zip, db]) else { throw ExitCode.failure }
            let dbBytes = (try FileManager.default.attributesOfItem(atPath: db)[.size] as? NSNumber)?.int64Value ?? 0
            print("anchor      healthkit-to-sqlite 1.0.1 on the same zip: \(seconds.formatted(1)) s, \((kb / 1024).formatted(0)) MiB peak RSS, \(grouped(Int(dbBytes))) B database (\((Double(dbBytes) / Double(report.added)).formatted(0)) B per record)")
            let ratio = seconds / first
            print("ratio       import is \(ratio.formatted(1)) x faster than the anchor   target >= 20 x: \(ratio >= 20 ? "met" : "NOT MET")")
            try? FileManager.default.removeItem(atPath: db)
        }


        /// Issue 39's floor, measured from outside: `vaultctl import` as a person runs it (first
        /// import into a fresh vault, the passphrase's unlock included) against `unzip -p` of the
        /// same zip to /dev/null (inflating alone, the floor of a streaming import on one core),
        /// alternately, `passes` times each.
        private func wholeCommandAgainstInflating(_ zip: String) throws {
            let cli = try VaultctlProcess(vaultctl)
            let passphrase = "\(work)/import-pass", vault = "\(work)/vault-whole"
            try Data("bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            defer { for path in [vault, passphrase] { try? FileManager.default.removeItem(atPath: path) } }
            var imports: [Double] = [], inflates: [Double] = [], peak = 0.0
            for _ in 0..<passes {
                guard let (seconds, _) = try timedProcess("/usr/bin/unzip", ["-p", zip]) else { throw ValidationError("unzip -p failed") }
                inflates.append(seconds)
                try? FileManager.default.removeItem(atPath: vault)
                try cli.run(["init", "--kdf", "interactive", "--vault", vault, "--passphrase-file", passphrase])
                guard let (whole, kib) = try timedProcess(cli.binary, ["import", zip, "--vault", vault, "--passphrase-file", passphrase]) else {
                    throw ValidationError("vaultctl import failed")
                }
                imports.append(whole)
                peak = max(peak, kib / 1024)
            }
            let ratio = median(imports) / median(inflates)
            print("command     vaultctl import (whole, first import): \(median(imports).formatted(2)) s (median of \(passes): \(imports.map { $0.formatted(2) }.joined(separator: ", "))), peak RSS \(peak.formatted(0)) MiB")
            print("inflate     unzip -p of the same zip to /dev/null: \(median(inflates).formatted(2)) s (median of \(passes): \(inflates.map { $0.formatted(2) }.joined(separator: ", ")))")
            print("floor       the import takes \(ratio.formatted(2)) x inflating alone   target <= 1.2 x: \(ratio <= 1.2 ? "met" : "NOT MET")")
        }
    }
}
