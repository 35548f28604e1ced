import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// Issue 19's target: a year of data renders in ≤ 1 s to a file of ≤ 2 MB, as a user runs
    /// `vaultctl report` (a process, `--kdf interactive`), against `vaultctl rings --json` of the
    /// same year (a command reading the same read models) in the same run.
    struct ReportBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report", abstract: "Time `vaultctl report` on a generated year against `vaultctl rings --json` (issue 19).")

        @Option(help: "Days the generated export covers.") var days = 365
        @Option(help: "Timed runs of each command; the median is reported.") var passes = 5
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench report: a vault of \(days) generated days, --kdf interactive, a process per command")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-bundle.zip"
            if !FileManager.default.fileExists(atPath: zip) { try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1)) }
            let passphrase = "\(work)/report-pass", vault = "\(work)/vault-report-\(days)", out = "\(work)/report-out"
            for path in [vault, out] { try? FileManager.default.removeItem(atPath: path) }
            defer { for path in [vault, out, passphrase] { try? FileManager.default.removeItem(atPath: path) } }
            try Data("report bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            func args(_ command: [String]) -> [String] { command + ["--vault", vault, "--passphrase-file", passphrase] }
            try cli.run(args(["init", "--kdf", "interactive"]))
            try cli.run(args(["import", zip]))
            try cli.run(args(["rings", "--json"]))  // read models caught up before timing
            var reports: [Double] = [], rings: [Double] = [], size = 0
            for pass in 0..<passes {
                let file = "\(out)/report-\(pass).html"
                reports.append(try cli.time(args(["report", "--out", file])))
                size = ((try FileManager.default.attributesOfItem(atPath: file))[.size] as? NSNumber)?.intValue ?? 0
                rings.append(try cli.time(args(["rings", "--json"])))
            }
            let r = median(reports), a = median(rings)
            print("")
            print("report    \(days) days: median \((r * 1000).formatted(0)) ms (of \(passes): \(reports.map { ($0 * 1000).formatted(0) }.joined(separator: ", ")) ms), "
                  + "\(grouped(size)) bytes   target <= 1 s and <= 2 MB: \(r <= 1 && size <= 2_000_000 ? "met" : "NOT MET")")
            print("anchor    vaultctl rings --json of the same vault: median \((a * 1000).formatted(0)) ms; report = \((r / a).formatted(2)) x the anchor")
        }
    }
}
