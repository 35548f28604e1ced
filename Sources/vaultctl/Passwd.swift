import ArgumentParser
import Vault

extension Vaultctl {
    struct Passwd: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "passwd",
            abstract: "Change the passphrase (only the keyslot is rewritten, atomically).",
            discussion: """
                The master key stays: a copy of the old keyslot (a backup) still opens the vault with the old passphrase. \
                --rekey also replaces the master key and re-encrypts the log, so that old keyslots open nothing \
                (it rewrites the whole log: about as long as reading it once), and replaces what an old keyslot \
                would still act with: the signing identity (recipients learn the new fingerprint), the companion \
                server's certificate and the paired apps' tokens (phones pair again).
                """)

        @OptionGroup var vault: VaultOptions

        @Option(name: .customLong("new-passphrase-file"), help: ArgumentHelp(
            "Read the new passphrase from the first line of FILE (default: $HEALTHVAULT_NEW_PASSPHRASE, else a prompt).",
            valueName: "FILE"))
        var newPassphraseFile: String?

        @Flag(help: "Also replace the master key and re-encrypt everything under it.")
        var rekey = false

        func execute() throws {
            let old = try vault.passphrase()
            let new = try PassphraseInput.read(
                file: newPassphraseFile, variable: "HEALTHVAULT_NEW_PASSPHRASE",
                fileFlag: "--new-passphrase-file", prompt: "New passphrase", what: "new passphrase", confirm: true)
            if rekey {
                let outcome = try Vault.rekey(at: vault.directory, from: old, to: new)
                Console.note("new master key and passphrase for \(vault.directory); keyslots copied before now open nothing written since")
                Console.note("new signing identity \(outcome.newFingerprint) (was \(outcome.oldFingerprint)): an old keyslot no longer signs for "
                             + "this vault; read the new fingerprint out to your recipients (`vaultctl identity`), who open bundles with --expect-sender")
                if !outcome.unpairedApps.isEmpty || outcome.droppedServerCertificate {
                    let apps = outcome.unpairedApps.map { TerminalText.sanitize($0) }.joined(separator: ", ")
                    Console.note("the companion server gets a new certificate" + (apps.isEmpty ? "" : " and the tokens of \(apps) were revoked")
                                 + ": pair phones again (`vaultctl companion pair NAME`)")
                }
            } else {
                try Vault.changePassphrase(at: vault.directory, from: old, to: new)
                Console.note("passphrase changed for \(vault.directory)")
            }
        }
    }
}
