import ArgumentParser
import Foundation
import SecureMemory
import SyntheticStudy
import TestSupport

extension VaultBench {
    /// Issue 18's target: a study of N participants × D days of raw activity loaded into
    /// PostgreSQL by `vaultctl study load` (the whole command, every bundle checked whole),
    /// against `psql \copy` of the same rows into the same tables in the same run (target ≥ 0.8×,
    /// memory bounded), and the SQLite default's rate.
    struct StudyBench: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "study", abstract: "Time `vaultctl study load` into PostgreSQL against psql \\copy of the same rows (issue 18).")

        @Option(help: "Participants.") var participants = 1000
        @Option(help: "Days of data each.") var days = 90
        @Option(help: "Consents: raw (everyone shares activity raw, once: the issue's load) or consents (raw, partial daily, expired, a withdrawal with a second full bundle, in turn).")
        var mix: String = SyntheticStudy.Mix.rawActivity.rawValue
        @Option(help: "Work directory.") var work = ".build/bench"
        @Option(help: "The vaultctl binary (default: beside this one).") var vaultctl: String?
        @Option(help: "Timed rounds, each a load and the anchor on the same emptied tables (the figures vary from run to run with the server's checkpoints).")
        var rounds = 1
        @Flag(help: "Keep the generated study (bundles, roster, the SQLite file) in the work directory.") var keep = false

        func run() throws {
            let cli = try VaultctlProcess(vaultctl)
            guard let mix = SyntheticStudy.Mix(rawValue: mix) else { throw ValidationError("--mix takes raw or consents") }
            print("vaultbench study: \(participants) participants x \(days) days (\(mix.rawValue)), PostgreSQL \(try serverVersion()) on loopback, vaultctl as a process")
            print("machine: \(Machine.summary)")
            let directory = "\(work)/study-\(participants)x\(days)-\(mix.rawValue)"
            try? FileManager.default.removeItem(atPath: directory)
            defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
            var secret = Array("study bench passphrase".utf8)
            let passphrase = Passphrase(consuming: &secret)
            let (study, made) = try measure {
                try SyntheticStudy.make(in: directory, participants: participants, days: days, mix: mix, passphrase: passphrase)
            }
            let bundleBytes = try study.bundles.reduce(0) { $0 + (((try FileManager.default.attributesOfItem(atPath: $1))[.size] as? NSNumber)?.intValue ?? 0) }
            print("generated \(study.participants.count) vaults and \(study.bundles.count) bundles (\(grouped(bundleBytes)) B) in \(made.formatted(1)) s")

            // The vaults made the bundles; the disk they take is better left to the databases.
            try? FileManager.default.removeItem(atPath: directory + "/vaults")
            let server = try PostgresServer()
            let load = ["study", "load"] + study.bundles + ["--key", study.keyPrefix + ".key", "--roster", study.roster, "--into"]
            // A first, untimed load warms the server for both timed runs (its WAL files made, its
            // caches filled: whichever ran first would pay for that) and gives the anchor its rows.
            guard try timedProcess(cli.binary, load + [server.url]) != nil else { throw ExitCode.failure }
            let dumps = ["samples", "aggregates", "records"].map { ($0, "\(FileManager.default.currentDirectoryPath)/\(directory)/\($0).tsv") }
            for (table, file) in dumps { _ = try server.psql("\\copy (SELECT * FROM \(table)) TO '\(file)'") }
            var totals = (rows: 0, load: 0.0, anchorRows: 0, anchor: 0.0)
            print("")
            for round in 1...max(1, rounds) {
                _ = try server.psql("DROP TABLE samples, aggregates, records, bundles, participants, withdrawals, study_meta CASCADE")
                _ = try server.psql("CHECKPOINT")
                guard let loaded = try timedProcess(cli.binary, load + [server.url]) else { throw ExitCode.failure }
                let rows = Int(try server.psql("SELECT (SELECT count(*) FROM samples) + (SELECT count(*) FROM aggregates) + (SELECT count(*) FROM records)")) ?? 0
                let lines = Int(try server.psql("SELECT sum(lines) FROM bundles")) ?? 0
                let withdrawn = Int(try server.psql("SELECT coalesce(sum(rows), 0) FROM withdrawals")) ?? 0

                // The anchor: the same rows copied back by psql into the same, emptied tables.
                _ = try server.psql("TRUNCATE samples, aggregates, records")
                _ = try server.psql("CHECKPOINT")
                let (_, copied) = try measure { for (table, file) in dumps { _ = try server.psql("\\copy \(table) FROM '\(file)'") } }
                let anchorRows = Int(try server.psql("SELECT (SELECT count(*) FROM samples) + (SELECT count(*) FROM aggregates) + (SELECT count(*) FROM records)")) ?? 0

                let rate = Double(rows) / loaded.seconds, anchor = Double(anchorRows) / copied
                print("round \(round)")
                print("  postgres  vaultctl study load: \(grouped(lines)) lines from \(study.bundles.count) bundles in \(loaded.seconds.formatted(2)) s = \(grouped(Int(Double(lines) / loaded.seconds))) lines/s; "
                      + "\(grouped(rows)) rows kept (\(grouped(withdrawn)) withdrawn) = \(grouped(Int(rate))) rows/s; peak RSS \((loaded.peakKiB / 1024).formatted(1)) MiB")
                print("  anchor    psql \\copy of the same \(grouped(anchorRows)) rows into the same tables: \(copied.formatted(2)) s = \(grouped(Int(anchor))) rows/s")
                print("  ratio     \((rate / anchor).formatted(2)) x")
                totals.rows += rows
                totals.load += loaded.seconds
                totals.anchorRows += anchorRows
                totals.anchor += copied
            }
            let ratio = (Double(totals.rows) / totals.load) / (Double(totals.anchorRows) / totals.anchor)
            print("ratio     \(ratio.formatted(2)) x the anchor's rows/s over \(max(1, rounds)) round(s)   target >= 0.8: \(ratio >= 0.8 ? "met" : "NOT MET")")

            // The server's tables and the anchor's dump make room for the SQLite file.
            let lines = Int(try server.psql("SELECT sum(lines) FROM bundles")) ?? 0
            _ = try server.psql("DROP TABLE samples, aggregates, records, bundles, participants, withdrawals, study_meta CASCADE")
            for (_, file) in dumps { try? FileManager.default.removeItem(atPath: file) }
            let sqlite = "\(directory)/study.sqlite"
            guard let embedded = try timedProcess(cli.binary, load + ["sqlite:" + sqlite]) else { throw ExitCode.failure }

            print("sqlite    vaultctl study load --into sqlite: \(embedded.seconds.formatted(2)) s = \(grouped(Int(Double(lines) / embedded.seconds))) lines/s; peak RSS \((embedded.peakKiB / 1024).formatted(1)) MiB")
        }

        private func serverVersion() throws -> String {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            return versions.sorted().last ?? "(none: apt-get install postgresql)"
        }
    }
}
