import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct Erase: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "erase",
            abstract: "Erase categories for whole months by destroying their keys; nothing can read them again.",
            discussion: """
                The frames stay in the log (the chain still verifies) but their keys are gone, whoever later learns \
                the passphrase. Backups made before, and bundles already given away, still hold what they held \
                (docs/threat-model.md). Without --from and --to every month is erased.
                """)

        @OptionGroup var vault: VaultOptions

        @Option(help: ArgumentHelp("Categories to erase, comma-separated (see `vaultctl grant --help`).", valueName: "C[,C...]"))
        var categories: String

        @Option(help: ArgumentHelp("First month erased.", valueName: "YYYY-MM"))
        var from: String?

        @Option(help: ArgumentHelp("Last month erased.", valueName: "YYYY-MM"))
        var to: String?

        @Flag(help: "Confirm: erasure cannot be undone.")
        var yes = false

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var categories: [String]
            var months: [String]
            var samplesErased: Int
            /// Backups that still hold the erased months' keys until their next `backup` run.
            var backupsHoldingErasedKeys: [String]
        }

        func validate() throws {
            guard yes else { throw ValidationError("erasure cannot be undone; add --yes to confirm") }
            for (flag, value) in [("--from", from), ("--to", to)] {
                if let value, LocalMonth(parsing: value) == nil { throw ValidationError("\(flag) takes a month as YYYY-MM, not '\(value)'") }
            }
        }

        func execute() throws {
            let wanted = try HealthCategory.parseList(categories)
            let opened = try vault.openForWriting()
            let summary = try opened.erase(categories: wanted, from: from.flatMap(LocalMonth.init(parsing:)), to: to.flatMap(LocalMonth.init(parsing:)))
            // The erasure is done; a list of backups that cannot be read is said, not a failure.
            let holding: [String]
            do {
                holding = try opened.backupDestinations().filter(\.holdsErasedKeys).map(\.destination)
            } catch {
                holding = []
                Console.note("warning: the list of backups could not be read (\(error)); run `vaultctl backup` to each backup to apply the erasure there")
            }
            if json {
                try Console.json(Output(categories: summary.categories, months: summary.months, samplesErased: summary.samplesErased,
                                        backupsHoldingErasedKeys: holding))
                return
            }
            defer {
                for destination in holding {
                    Console.note("the backup at \(destination) still holds the erased months' keys until its next `vaultctl backup \(destination)`")
                }
            }
            if summary.samplesErased == 0 && summary.months.isEmpty {
                Console.print("nothing to erase: the vault holds no \(categories) data in that range")
                return
            }
            Console.print("erased \(summary.samplesErased) events of \(summary.categories.joined(separator: ", ")) in \(summary.months.count) month(s): \(summary.months.joined(separator: ", "))")
        }
    }
}
