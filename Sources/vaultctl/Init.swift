import ArgumentParser
import Vault

extension Vaultctl {
    struct Init: VaultCommand {
        static let configuration = CommandConfiguration(commandName: "init", abstract: "Create a vault; refuse if one exists.")

        @OptionGroup var vault: VaultOptions

        @Option(help: "Passphrase hardening: interactive (~0.1 s), moderate (~0.6 s) or sensitive (several s).")
        var kdf: KDFPreset = .moderate

        func execute() throws {
            let directory = vault.directory
            let passphrase = try vault.passphrase(confirm: true)
            _ = try Vault.create(at: directory, passphrase: passphrase, kdf: kdf.parameters, kdfName: kdf.rawValue)
            Console.note("created vault at \(directory) (key derivation: Argon2id, \(kdf.rawValue))")
        }
    }
}

extension KDFPreset: ExpressibleByArgument {}
