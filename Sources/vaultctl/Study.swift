import ArgumentParser
import Foundation
import StudyStore

extension Vaultctl {
    struct Study: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "study",
            abstract: "Researcher side: load a study's bundles into SQLite or PostgreSQL.", subcommands: [Load.self])

        struct Load: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "load",
                abstract: "Load bundles into a study database, each checked whole and loaded all or nothing (docs/study-schema.md).",
                discussion: """
                    Loading a bundle twice adds nothing. A participant's latest bundle decides what their consents cover: rows \\
                    outside it are deleted and the withdrawal recorded. With --roster, bundles from fingerprints not on it are refused.
                    """)

            @Argument(help: ArgumentHelp("The bundles.", valueName: "BUNDLE")) var bundles: [String]
            @Option(help: ArgumentHelp("Your secret key file from `keygen`.", valueName: "PREFIX.key")) var key: String
            @Option(help: ArgumentHelp("sqlite:PATH or postgres://USER@HOST:PORT/DB (password from PGPASSWORD).", valueName: "URL"))
            var into: String
            @Option(help: ArgumentHelp("A CSV of participant,fingerprint: bundles from anyone else are refused.", valueName: "FILE"))
            var roster: String?
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var bundles: Int
                var participants: Int
                var rows: Int
                var duplicates: Int
                var withdrawn: Int
                var refused: [Refused]
                struct Refused: Encodable { var bundle: String; var error: String }
            }

            func validate() throws {
                if bundles.isEmpty { throw ValidationError("name at least one bundle") }
            }

            func execute() throws {
                let target = try StudyTarget(into)
                let roster = try roster.map { try StudyRoster(contentsOf: $0) }
                if roster == nil { Console.note("warning: no --roster: bundles are loaded from whichever vault signed them") }
                let summary = try StudyLoader.load(bundles: bundles, keyFile: key, into: target, roster: roster)
                for refusal in summary.refused { Console.error(refusal.reason) }
                for warning in summary.warnings { Console.note("warning: " + warning) }
                if json {
                    try Console.json(Output(bundles: summary.bundles, participants: summary.participants, rows: summary.rows,
                                            duplicates: summary.duplicates, withdrawn: summary.withdrawn,
                                            refused: summary.refused.map { .init(bundle: $0.bundle, error: $0.reason) }))
                } else {
                    Console.print("loaded \(summary.bundles) bundle(s) from \(summary.participants) participant(s) into \(target): \(summary.rows) rows added, \(summary.duplicates) already held, \(summary.withdrawn) withdrawn")
                }
                if !summary.refused.isEmpty { throw ExitCode.failure }
            }
        }
    }
}
