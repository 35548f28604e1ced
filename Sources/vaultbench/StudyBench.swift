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
        @Flag(help: "Leave out the SQLite load (a quarter of the time at full size).") var skipSqlite = false
        @Option(help: ArgumentHelp("Connections to time the PostgreSQL load with, each in every round (HEALTHVAULT_STUDY_CONNECTIONS); vaultctl's default (one a core, up to four) when not given.", valueName: "N"))
        var connections: [Int] = []

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
            // A first, untimed load warms the server for the timed runs (its WAL files made, its
            // caches filled: whichever ran first would pay for that).
            guard try timedProcess(cli.binary, load + [server.url]) != nil else { throw ExitCode.failure }
            let absolute = directory.hasPrefix("/") ? directory : "\(FileManager.default.currentDirectoryPath)/\(directory)"
            // Each load timed: vaultctl's default, or each connection count asked for.
            let variants: [Int?] = connections.isEmpty ? [nil] : connections.map { $0 }
            var loads: [(rows: Int, seconds: Double)] = Array(repeating: (0, 0), count: variants.count)
            var anchors: [AnchorOrder: (rows: Int, seconds: Double)] = [:]
            print("")
            for round in 1...max(1, rounds) {
                print("round \(round)")
                var rates: [Double] = []
                for (index, variant) in variants.enumerated() {
                    _ = try server.psql("DROP TABLE samples, aggregates, records, bundles, participants, withdrawals, study_meta CASCADE")
                    try settle(server)
                    let environment = variant.map { ["HEALTHVAULT_STUDY_CONNECTIONS": "\($0)"] } ?? [:]
                    guard let loaded = try timedProcess(cli.binary, load + [server.url], environment: environment) else { throw ExitCode.failure }
                    let rows = try rowCount(server)
                    let lines = Int(try server.psql("SELECT sum(lines) FROM bundles")) ?? 0
                    let withdrawn = Int(try server.psql("SELECT coalesce(sum(rows), 0) FROM withdrawals")) ?? 0
                    let rate = Double(rows) / loaded.seconds
                    rates.append(rate)
                    print("  postgres  vaultctl study load, \(Self.label(variant)): \(grouped(lines)) lines from \(study.bundles.count) bundles in \(loaded.seconds.formatted(2)) s = \(grouped(Int(Double(lines) / loaded.seconds))) lines/s; "
                          + "\(grouped(rows)) rows kept (\(grouped(withdrawn)) withdrawn) = \(grouped(Int(rate))) rows/s; peak RSS \((loaded.peakKiB / 1024).formatted(1)) MiB")
                    loads[index].rows += rows
                    loads[index].seconds += loaded.seconds
                }

                // The anchor: the rows the last load kept, dumped by psql (untimed) and copied back
                // into the same, emptied tables, in each order.
                for order in AnchorOrder.allCases {
                    // One list of files per psql (the side-by-side anchor: half the participants each).
                    let streams = (0..<order.streams).map { stream in
                        ["samples", "aggregates", "records"].map { ($0, "\(absolute)/\($0)-\(stream).tsv") }
                    }
                    for (stream, dumps) in streams.enumerated() {
                        for (table, file) in dumps { _ = try server.psql(order.dumpCommands(table: table, file: file, stream: stream)) }
                    }
                    _ = try server.psql("TRUNCATE samples, aggregates, records")
                    try settle(server)
                    let (_, copied) = try measure { try Self.copyBack(streams, into: server) }
                    for dumps in streams { for (_, file) in dumps { try? FileManager.default.removeItem(atPath: file) } }
                    let anchorRows = try rowCount(server)
                    let anchor = Double(anchorRows) / copied
                    let ratios = zip(variants, rates).map { "\(Self.label($0)) \(($1 / anchor).formatted(2)) x" }.joined(separator: ", ")
                    print("  anchor    psql \\copy of the same \(grouped(anchorRows)) rows into the same tables, \(order.label): \(copied.formatted(2)) s = \(grouped(Int(anchor))) rows/s; ratio \(ratios)")
                    let sum = anchors[order] ?? (0, 0)
                    anchors[order] = (sum.rows + anchorRows, sum.seconds + copied)
                }
            }
            for order in AnchorOrder.allCases {
                let anchor = anchors[order]!
                for (variant, total) in zip(variants, loads) {
                    let ratio = (Double(total.rows) / total.seconds) / (Double(anchor.rows) / anchor.seconds)
                    let verdict = order == .bundles ? "   target >= 0.8: \(ratio >= 0.8 ? "met" : "NOT MET")" : ""
                    print("ratio     \(ratio.formatted(2)) x the anchor's rows/s (\(order.label)), \(Self.label(variant)), over \(max(1, rounds)) round(s)\(verdict)")
                }
            }

            guard !skipSqlite else { return }
            // The server's tables make room for the SQLite file.
            let lines = Int(try server.psql("SELECT sum(lines) FROM bundles")) ?? 0
            _ = try server.psql("DROP TABLE samples, aggregates, records, bundles, participants, withdrawals, study_meta CASCADE")
            let sqlite = "\(directory)/study.sqlite"
            guard let embedded = try timedProcess(cli.binary, load + ["sqlite:" + sqlite]) else { throw ExitCode.failure }

            print("sqlite    vaultctl study load --into sqlite: \(embedded.seconds.formatted(2)) s = \(grouped(Int(Double(lines) / embedded.seconds))) lines/s; peak RSS \((embedded.peakKiB / 1024).formatted(1)) MiB")
        }

        /// Before a timed run: the server's dirty pages written (`CHECKPOINT`), then the file
        /// system's (`sync`): a dump of 20 GB written just before the anchor would otherwise be
        /// flushed to disk while it runs (it was, in the first run of this protocol).
        private func settle(_ server: PostgresServer) throws {
            _ = try server.psql("CHECKPOINT")
            sync()
        }

        /// `psql \\copy` of each stream's files, the streams side by side (one psql each).
        private static func copyBack(_ streams: [[(table: String, file: String)]], into server: PostgresServer) throws {
            let failures = FailureList()
            let shared = SharedServer(server: server)
            DispatchQueue.concurrentPerform(iterations: streams.count) { stream in
                do {
                    for (table, file) in streams[stream] { _ = try shared.server.psql("\\copy \(table) FROM '\(file)'") }
                } catch {
                    failures.add(error)
                }
            }
            if let error = failures.first { throw error }
        }

        private static func label(_ connections: Int?) -> String {
            connections.map { "\($0) connection\($0 == 1 ? "" : "s")" } ?? "default connections"
        }

        private func rowCount(_ server: PostgresServer) throws -> Int {
            Int(try server.psql("SELECT (SELECT count(*) FROM samples) + (SELECT count(*) FROM aggregates) + (SELECT count(*) FROM records)")) ?? 0
        }

        private func serverVersion() throws -> String {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            return versions.sorted().last ?? "(none: apt-get install postgresql)"
        }
    }
}

/// The order of the rows `psql \copy` is given, the anchor of `vaultbench study`.
enum AnchorOrder: CaseIterable {
    /// As the bundles bring them: each participant's rows together, participants in the order
    /// they were loaded (every month's partition written for each). The target's anchor.
    case bundles
    /// As the tables hold them: partition after partition, so the copy fills one month's table
    /// and indexes at a time; no loader of bundles sees its rows in this order. The anchor of
    /// the runs before 2026-11-26.
    case tables
    /// In the bundles' order, two psql side by side, each with half the participants: the raw
    /// COPY given the parallelism a `study load` over two connections has (not the issue's
    /// anchor, which is one psql; shown so the two-connection load is read against its like).
    case bundlesTwoStreams

    var label: String {
        switch self {
        case .bundles: "in the bundles' order"
        case .tables: "in the tables' order"
        case .bundlesTwoStreams: "in the bundles' order, two psql side by side"
        }
    }

    /// How many psql copy the rows back at once.
    var streams: Int { self == .bundlesTwoStreams ? 2 : 1 }

    /// psql commands writing `table`'s rows of `stream` to `file` in this order.
    func dumpCommands(table: String, file: String, stream: Int) -> [String] {
        switch self {
        case .tables:
            return ["\\copy (SELECT * FROM \(table)) TO '\(file)'"]
        case .bundles, .bundlesTwoStreams:
            // One participant at a time through the primary key (which leads with the
            // fingerprint): no sort of the whole table, no temporary files. With two streams,
            // participants alternate between them.
            let participants = streams == 1 ? "SELECT fingerprint, first_loaded FROM participants"
                : "SELECT fingerprint, first_loaded FROM (SELECT fingerprint, first_loaded, row_number() OVER (ORDER BY first_loaded, fingerprint) AS n FROM participants) q WHERE n % \(streams) = \(stream)"
            return ["SET enable_hashjoin = off", "SET enable_mergejoin = off",
                    "\\copy (SELECT t.* FROM (\(participants) ORDER BY first_loaded, fingerprint) p CROSS JOIN LATERAL (SELECT * FROM \(table) x WHERE x.fingerprint = p.fingerprint) t) TO '\(file)'"]
        }
    }
}

/// The test server, used from two threads: each call starts a psql process of its own.
private struct SharedServer: @unchecked Sendable {
    let server: PostgresServer
}

/// Errors gathered from threads.
private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func add(_ error: Error) { lock.withLock { errors.append(error) } }
    var first: Error? { lock.withLock { errors.first } }
}
