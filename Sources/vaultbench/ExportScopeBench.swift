import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// Issue 38's export row: `vaultctl export` of one granted category on a vault holding `days`
    /// of data costs what is granted, not the log. Each export is the whole command as a user
    /// runs it; the anchor is `vaultctl verify`, which decrypts every frame, timed in the same
    /// run. With `--compare`, the same exports by another build on the same vault, alternated
    /// pass by pass, give the before and after of one run.
    struct ExportScopeBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-scope",
            abstract: "Time `vaultctl export` of one granted category against every category's daily figures and a whole-log decrypt.")

        @Option(help: "Days the vault's generated export covers.") var days = 3650
        @Option(help: "Timed runs of each command; the median is reported.") var passes = 3
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?
        @Option(help: "Another vaultctl build whose exports are timed beside this one's, on the same vault.") var compare: String?

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            let other = try compare.map { try VaultctlProcess($0) }
            print("vaultbench export-scope: `vaultctl export` on a vault holding a generated export of \(days) days, --kdf interactive")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let zip = "\(work)/export-\(days)d-seed1-bundle.zip"
            if !FileManager.default.fileExists(atPath: zip) {
                try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1))
            }
            let vault = "\(work)/vault-export-scope", out = "\(work)/export-scope-out", passphrase = "\(work)/export-scope-pass"
            for path in [vault, out] { try? FileManager.default.removeItem(atPath: path) }
            defer { for path in [vault, out, passphrase] { try? FileManager.default.removeItem(atPath: path) } }
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            try Data("export scope passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            func args(_ command: [String]) -> [String] { command + ["--vault", vault, "--passphrase-file", passphrase] }

            try cli.run(args(["init", "--kdf", "interactive"]))
            try cli.run(args(["import", zip]))
            try cli.run(["keygen", "--out", "\(out)/lab"])
            let everything = "activity,heart,sleep,body,vitals,workouts,location,nutrition,mindfulness,reproductive,clinical,profile,other,trackers"
            typealias Row = (recipient: String, categories: String, granularity: String, what: String)
            let rows: [Row] = [
                ("body", "body", "raw", "body, raw (one small category)"),
                ("heart", "heart", "raw", "heart, raw (one large category)"),
                ("hourly", "activity", "hourly", "activity, hourly (the largest category)"),
                ("daily", everything, "daily", "every category, daily (the read models' figures)"),
            ]
            for row in rows {
                try cli.run(args(["recipient", "add", row.recipient, "--key", "\(out)/lab.pub"]))
                try cli.run(args(["grant", row.recipient, "--categories", row.categories, "--granularity", row.granularity]))
            }

            var anchors: [Double] = []
            for _ in 0..<passes { anchors.append(try cli.time(args(["verify"]))) }
            let anchor = median(anchors)
            print("")
            print("anchor      vaultctl verify (decrypts and checks every frame): \(anchor.formatted(2)) s (median of \(passes))")
            var serial = 0
            for row in rows {
                var these: [Double] = [], others: [Double] = []
                var lines = 0
                for _ in 0..<passes {
                    serial += 1
                    let path = "\(out)/\(row.recipient)-\(serial).bundle"
                    let (data, seconds) = try measure { try cli.output(args(["export", row.recipient, "--out", path, "--json"])) }
                    these.append(seconds)
                    if let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                       let counts = object["counts"] as? [String: Int] {
                        lines = counts.values.reduce(0, +)
                    }
                    try? FileManager.default.removeItem(atPath: path)
                    if let other {
                        let otherPath = "\(out)/\(row.recipient)-\(serial)-compare.bundle"
                        others.append(try other.time(args(["export", row.recipient, "--out", otherPath])))
                        try? FileManager.default.removeItem(atPath: otherPath)
                    }
                }
                let time = median(these)
                var text = "export      \(row.what): \(time.formatted(2)) s for \(grouped(lines)) lines, \((time / anchor).formatted(2)) x the anchor"
                if !others.isEmpty {
                    text += "; --compare build \(median(others).formatted(2)) s (\((median(others) / anchor).formatted(2)) x)"
                }
                print(text)
            }
        }
    }
}
