import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct Sources: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "sources",
            abstract: "The sources that wrote samples, in the order that decides which one counts where they overlap.",
            subcommands: [Prefer.self, Reset.self])

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var rank: Int
            var name: String
            var device: String
            var samples: Int
            var ordered: Bool
        }

        func execute() throws {
            let rows = try vault.openWithProjections().sources()
            if json {
                try Console.json(rows.map {
                    Output(rank: $0.rank, name: $0.key.name, device: $0.key.deviceClass.description, samples: $0.samples, ordered: $0.ordered)
                })
                return
            }
            if rows.isEmpty { Console.note("no sources yet; import some data first") }
            for row in rows {
                Console.print("\(row.rank). \(row.key.name) [\(row.key.deviceClass)] \(row.samples) samples\(row.ordered ? " (your order)" : "")")
            }
        }

        struct Prefer: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "prefer",
                abstract: "Count these sources first, in this order; the rest follow in the default order (Watch, iPhone, others).")

            @OptionGroup var vault: VaultOptions

            @Argument(help: ArgumentHelp("Source names as `vaultctl sources` shows them.", valueName: "NAME"))
            var names: [String]

            func execute() throws {
                let opened = try vault.openForWriting()
                let warning = try opened.setSourceOrder(names: names)
                vault.reportProjectionNotice(of: opened, warning: warning)
                Console.print("source order recorded; totals recomputed")
            }
        }

        struct Reset: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "reset", abstract: "Go back to the default order (Watch, iPhone, others).")

            @OptionGroup var vault: VaultOptions

            func execute() throws {
                let opened = try vault.openForWriting()
                let warning = try opened.setSourceOrder(names: [])
                vault.reportProjectionNotice(of: opened, warning: warning)
                Console.print("default source order restored; totals recomputed")
            }
        }
    }
}
