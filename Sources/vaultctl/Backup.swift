import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct Backup: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "backup",
            abstract: "Copy the vault (ciphertext only) to a directory; later runs add what changed and apply erasures.",
            subcommands: [Run.self, List.self, Verify.self], defaultSubcommand: Run.self)

        func execute() throws {}

        /// Says, when there are any, how many records of runs made without the passphrase no key
        /// opened, and what became of them (`consequence`).
        static func warnOfRecordsNotOpened(_ count: Int, _ consequence: String) {
            guard count > 0 else { return }
            Console.note("warning: \(count) record(s) of backups made without the passphrase could not be opened (backups.pub was altered, "
                         + "or a re-key was interrupted); " + consequence)
        }

        struct Run: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "run", abstract: "Back up to DEST (the default: `vaultctl backup DEST`).")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "The backup directory (a disk, a NAS or a cloud folder you mounted).") var destination: String
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var destination: String
                var position: UInt64
                var bytesWritten: UInt64
                var erasuresApplied: Int
            }

            func execute() throws {
                // Only ciphertext is copied: the passphrase is asked for when the run must decide
                // something only the key tells (docs/backup.md, "Runs without the passphrase").
                let run: BackupRun
                let outcome: BackupWithoutPassphrase
                do {
                    outcome = try Vault.backupWithoutPassphrase(of: vault.directory, to: destination)
                } catch let error as BackupError where error.isAboutTheDestination {
                    throw error
                } catch {
                    // What an unauthenticated read met (a re-key left half done, a head that does not
                    // parse) is the key's to judge: the run with it finishes or names it.
                    outcome = .needsPassphrase(reason: "\(error)")
                }
                switch outcome {
                case .done(let done):
                    run = done
                case .needsPassphrase(let reason):
                    if vault.passphraseFile == nil, getenv("HEALTHVAULT_PASSPHRASE") == nil, isatty(STDIN_FILENO) == 1 {
                        Console.note("the passphrase is needed: \(reason)")
                    }
                    run = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).backup(to: destination)
                    Backup.warnOfRecordsNotOpened(run.recordsDropped, "they were dropped: run `vaultctl backup DEST` to each backup")
                }
                if json {
                    try Console.json(Output(destination: run.destination, position: run.position, bytesWritten: run.bytesWritten,
                                            erasuresApplied: run.erasuresApplied))
                    return
                }
                let erased = run.erasuresApplied > 0 ? "; \(run.erasuresApplied) erased month key(s) destroyed there" : ""
                Console.print("backed up \(run.position) events to \(run.destination): \(run.bytesWritten) bytes written"
                              + (run.copiedWhole ? " (the log copied whole)" : "") + erased)
            }
        }

        struct List: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "The destinations backed up to.")
            @OptionGroup var vault: VaultOptions
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var destination: String
                var lastRun: String
                var position: UInt64
                var bytes: UInt64
                var holdsErasedKeys: Bool
            }

            func execute() throws {
                let opened = try Vault.open(at: vault.directory, passphrase: try vault.passphrase())
                Backup.warnOfRecordsNotOpened(try opened.backupRunsNotOpened(),
                                              "those runs are missing below until the next `vaultctl backup DEST` to each backup")
                let rows = try opened.backupDestinations().map {
                    Output(destination: $0.destination, lastRun: ISO8601DateFormatter().string(from: $0.lastRun), position: $0.position,
                           bytes: $0.bytes, holdsErasedKeys: $0.holdsErasedKeys)
                }
                if json {
                    try Console.json(rows)
                    return
                }
                if rows.isEmpty { Console.print("no backup yet (`vaultctl backup DEST`)") }
                for row in rows {
                    Console.print("\(row.destination)  last run \(row.lastRun), \(row.position) events, \(row.bytes) bytes"
                                  + (row.holdsErasedKeys ? "; still holds keys of erased months until its next run" : ""))
                }
            }
        }

        struct Verify: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "verify", abstract: "Check a backup: every frame authenticated and chained, its key table and head consistent.")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "The backup directory.") var destination: String
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var ok: Bool
                var frames: Int
                var events: UInt64
                var problems: [String]
            }

            func execute() throws {
                let report = try Vault.verifyBackup(at: destination, passphrase: try vault.passphrase())
                if json {
                    try Console.json(Output(ok: report.isOK, frames: report.frames, events: report.events, problems: report.problems))
                } else if report.isOK {
                    Console.print("ok: \(report.frames) frames, \(report.events) events, every frame authenticated and chained")
                } else {
                    Console.print("DAMAGED: " + report.problems.joined(separator: "; "))
                }
                if !report.isOK { throw ExitCode(1) }
            }
        }
    }

    struct Restore: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore", abstract: "Make a vault from a backup, as it was at the backup's position, in a new or empty DIR.")
        @OptionGroup var vault: VaultOptions
        @Argument(help: "The backup directory.") var destination: String
        @Option(help: ArgumentHelp("Where the restored vault goes (new or empty).", valueName: "DIR")) var to: String

        func execute() throws {
            let report = try Vault.restore(from: destination, to: to, passphrase: try vault.passphrase())
            guard report.isOK else {
                Console.print("not restored, the backup is damaged: " + report.problems.joined(separator: "; "))
                throw ExitCode(1)
            }
            Console.print("restored \(report.events) events into \(to); verified (the read models are rebuilt by the first command)")
        }
    }
}
