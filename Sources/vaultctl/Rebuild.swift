import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct Rebuild: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "rebuild",
            abstract: "Drop every projection and replay the whole log into new ones.")

        @OptionGroup var vault: VaultOptions

        func execute() throws {
            let opened = try vault.openForWriting()
            let rebuild = try opened.rebuildProjections()
            vault.reportProjectionNotice(of: opened)
            Console.print("rebuilt from \(rebuild.events) log entries (\(rebuild.inputs) fed the projections) in \(String(format: "%.2f", rebuild.seconds)) s")
        }
    }
}
