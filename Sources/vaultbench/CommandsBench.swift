import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// Issue 13's table: what each everyday command costs on a vault holding `days` of data,
    /// against the same command on an empty vault in the same run, as a user runs it (a process
    /// per command, `--kdf interactive`). Wall time is measured around the process; peak RSS comes
    /// from `/usr/bin/time`.
    struct CommandsBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "commands",
            abstract: "Time everyday commands on a full vault against an empty one (issue 13's table).")

        @Option(help: "Days the full vault's generated export covers.") var days = 365
        @Option(help: "Timed runs of each command on each vault; the median is reported.") var passes = 5
        @Option(help: "Work directory (the export is generated once and kept there).") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?
        @Option(help: "healthkit-to-sqlite executable: the first import (the whole `vaultctl import`, median of three on fresh vaults) is timed against it on the same zip (issue 13's 30x row).")
        var anchor: String?

        /// A command's wall time as `/usr/bin/time` reports it (the process from its start to its
        /// exit, as the anchor is timed; to 10 ms), and from here (with the spawning of both
        /// processes; the rows' differences of a few ms are taken from this one).
        struct Run { var seconds: Double; var fromHere: Double; var peakMiB: Double }

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            print("vaultbench commands: a vault holding a generated export of \(days) days against an empty vault, --kdf interactive")
            print("machine: \(Machine.summary)")
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            // With the anchor, the zip has iOS 16's broken DTD closed (its XML parser stops at it);
            // the records are the same.
            let zip = "\(work)/export-\(days)d-seed1-\(anchor == nil ? "bundle" : "closed-dtd").zip"
            if !FileManager.default.fileExists(atPath: zip) {
                try SyntheticExport.writeZip(to: zip, options: .init(days: days, seed: 1, iOS16DTDBug: anchor == nil))
            }
            let passphrase = "\(work)/commands-pass"
            try Data("commands bench passphrase\n".utf8).write(to: URL(fileURLWithPath: passphrase))
            let empty = "\(work)/vault-commands-empty", full = "\(work)/vault-commands-\(days)"
            for dir in [empty, full, "\(work)/commands-out"] { try? FileManager.default.removeItem(atPath: dir) }
            defer { for dir in [empty, full, "\(work)/commands-out", passphrase] { try? FileManager.default.removeItem(atPath: dir) } }
            try FileManager.default.createDirectory(atPath: "\(work)/commands-out", withIntermediateDirectories: true)
            func args(_ vault: String, _ command: [String]) -> [String] { command + ["--vault", vault, "--passphrase-file", passphrase] }

            try cli.run(args(empty, ["init", "--kdf", "interactive"]))
            // The first import, on a fresh vault each time when it is timed against the anchor.
            var firsts: [Run] = []
            for _ in 0..<(anchor == nil ? 1 : 3) {
                try? FileManager.default.removeItem(atPath: full)
                try cli.run(args(full, ["init", "--kdf", "interactive"]))
                firsts.append(try timed(cli, args(full, ["import", zip])))
            }
            let first = firsts.sorted { $0.seconds < $1.seconds }[firsts.count / 2]
            let firstFromHere = firsts.map(\.fromHere).sorted()[firsts.count / 2]
            try cli.run(["keygen", "--out", "\(work)/commands-out/lab"])
            for vault in [empty, full] {
                try cli.run(args(vault, ["recipient", "add", "lab", "--key", "\(work)/commands-out/lab.pub"]))
                try cli.run(args(vault, ["grant", "lab", "--categories", "activity", "--granularity", "daily", "--from", "2024-04-01", "--to", "2024-06-30"]))
            }

            typealias Row = (name: String, command: (Int, String) throws -> [String], target: String)
            let rows: [Row] = [
                ("import of a one-sample companion JSON", { pass, vault in
                    let file = "\(work)/commands-out/sample-\(pass)-\((vault as NSString).lastPathComponent).json"
                    try Data(#"{"metric":"STEPS","data":[{"timeRange":"2024-06-10 0\#(pass):00/2024-06-10 0\#(pass):30","value":\#(100 + pass)}]}"#.utf8)
                        .write(to: URL(fileURLWithPath: file))
                    return ["import", file]
                }, "<= 50 ms more, peak <= 100 MB"),
                ("goals set", { pass, _ in ["goals", "set", "move", "\(500 + pass)", "--from", "2024-06-01"] }, "<= 50 ms more"),
                ("grant", { _, _ in ["grant", "lab", "--categories", "heart", "--granularity", "daily"] }, "<= 50 ms more"),
                ("recipient add", { pass, _ in ["recipient", "add", "lab \(pass + 1)", "--key", "\(work)/commands-out/lab.pub"] }, "<= 50 ms more"),
                ("rings for one week", { _, _ in ["rings", "--from", "2024-06-03", "--to", "2024-06-09", "--json"] }, "<= 30 ms more"),
                ("summary for one week", { _, _ in ["summary", "steps", "--from", "2024-06-03", "--to", "2024-06-09", "--json"] }, "<= 30 ms more"),
                ("streaks", { _, _ in ["streaks", "--json"] }, "<= 30 ms more"),
                ("export of three months daily", { pass, vault in
                    ["export", "lab", "--out", "\(work)/commands-out/\((vault as NSString).lastPathComponent)-\(pass).bundle"]
                }, "<= 200 ms more"),
            ]
            print("")
            print("first import \(first.seconds.formatted(2)) s, \(first.peakMiB.formatted(0)) MiB peak RSS (\(days) days)   target: peak <= 100 MB")
            if let anchor {
                let db = "\(work)/commands-out/anchor.db"
                guard let (seconds, _) = try timedProcess(anchor, [zip, db]) else { throw ExitCode.failure }
                let ratio = seconds / first.seconds
                print("anchor       healthkit-to-sqlite 1.0.1 on the same zip: \(seconds.formatted(1)) s; the whole `vaultctl import` (median of \(firsts.map { $0.seconds.formatted(2) }.joined(separator: ", ")) s) "
                      + "is \(ratio.formatted(1)) x faster   target >= 30 x: \(ratio >= 30 ? "met" : "NOT MET")")
                print("             (both as /usr/bin/time reports them; from vaultbench, with the processes' spawning, the import's median is \(firstFromHere.formatted(2)) s: \((seconds / firstFromHere).formatted(1)) x)")
            }
            for row in rows {
                var emptyRuns: [Run] = [], fullRuns: [Run] = []
                for pass in 0..<passes {
                    emptyRuns.append(try timed(cli, args(empty, try row.command(pass, empty))))
                    fullRuns.append(try timed(cli, args(full, try row.command(pass, full))))
                }
                let e = median(emptyRuns.map(\.fromHere)), f = median(fullRuns.map(\.fromHere))
                print("\(row.name.padding(toLength: 38, withPad: " ", startingAt: 0)) empty \((e * 1000).formatted(0)) ms, full \((f * 1000).formatted(0)) ms: "
                      + "\(((f - e) * 1000).formatted(0)) ms more; peak \(median(fullRuns.map(\.peakMiB)).formatted(0)) MiB (empty \(median(emptyRuns.map(\.peakMiB)).formatted(0)))   target \(row.target)")
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: full)
            let bytes = try files.reduce(0) { $0 + (((try FileManager.default.attributesOfItem(atPath: full + "/" + $1))[.size] as? NSNumber)?.intValue ?? 0) }
            let log = ((try FileManager.default.attributesOfItem(atPath: full + "/events.log"))[.size] as? NSNumber)?.intValue ?? 0
            let models = ((try? FileManager.default.attributesOfItem(atPath: full + "/projections.db"))?[.size] as? NSNumber)?.intValue ?? 0
            print("size         \(grouped(bytes)) B in the vault directory (log \(grouped(log)) B, read models \(grouped(models)) B)")
        }

        /// Runs `vaultctl arguments`, timing it as /usr/bin/time does (as the anchor is) and from
        /// here, and taking its peak RSS from /usr/bin/time.
        private func timed(_ cli: VaultctlProcess, _ arguments: [String]) throws -> Run {
            let (result, fromHere) = try measure { try timedProcess(cli.binary, arguments) }
            guard let result else { throw ValidationError("vaultctl \(arguments[0]) failed") }
            return Run(seconds: result.seconds, fromHere: fromHere, peakMiB: result.peakKiB / 1024)
        }
    }
}
