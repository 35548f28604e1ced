import ArgumentParser
import Vault

extension Vaultctl {
    struct Passwd: VaultCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the passphrase (only the keyslot is rewritten, atomically).")

        @OptionGroup var vault: VaultOptions

        @Option(name: .customLong("new-passphrase-file"), help: ArgumentHelp(
            "Read the new passphrase from the first line of FILE (default: $HEALTHVAULT_NEW_PASSPHRASE, else a prompt).",
            valueName: "FILE"))
        var newPassphraseFile: String?

        func execute() throws {
            let old = try vault.passphrase()
            let new = try PassphraseInput.read(
                file: newPassphraseFile, variable: "HEALTHVAULT_NEW_PASSPHRASE",
                fileFlag: "--new-passphrase-file", prompt: "New passphrase", what: "new passphrase", confirm: true)
            try Vault.changePassphrase(at: vault.directory, from: old, to: new)
            Console.note("passphrase changed for \(vault.directory)")
        }
    }
}
