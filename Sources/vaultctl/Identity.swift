import ArgumentParser
import Foundation
import ResearchBundle
import Vault

extension Vaultctl {
    struct Keygen: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "keygen",
            abstract: "For a researcher: write PREFIX.pub (give it to the person) and PREFIX.key (keep it; mode 0600).")

        @Option(help: ArgumentHelp("Path prefix of the two files.", valueName: "PREFIX"))
        var out: String

        func execute() throws {
            try RecipientKeyFiles.generate(prefix: out)
            Console.print("wrote \(out).pub (public: send it to the person sharing data) and \(out).key (secret, mode 0600)")
        }
    }

    struct Identity: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "identity",
            abstract: "The vault's public keys and fingerprint, to give to a researcher.",
            subcommands: [Show.self, Rotate.self], defaultSubcommand: Show.self)

        struct Show: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the fingerprint and public keys.")

            @OptionGroup var vault: VaultOptions
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var fingerprint: String
                var signingKey: String
                var encryptionKey: String
            }

            func execute() throws {
                let identity = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).identity()
                let output = Output(fingerprint: identity.fingerprint, signingKey: Data(identity.signing.publicKey).base64EncodedString(),
                                    encryptionKey: Data(identity.encryption.publicKey).base64EncodedString())
                if json { try Console.json(output); return }
                Console.print("fingerprint     \(output.fingerprint)")
                Console.print("signing key     \(output.signingKey) (Ed25519)")
                Console.print("encryption key  \(output.encryptionKey) (X25519)")
            }
        }

        struct Rotate: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "rotate",
                abstract: "Replace the vault's signing and encryption keys (recorded in the audit trail).",
                discussion: "Recipients who check --expect-sender must be given the new fingerprint. Also the way back to signing after identity.sealed was lost.")

            @OptionGroup var vault: VaultOptions
            @Flag(help: "Confirm: bundles will carry a new fingerprint.") var yes = false
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable { var previous: String?; var fingerprint: String }

            func validate() throws {
                guard yes else { throw ValidationError("rotating the identity gives bundles a new fingerprint that every recipient must learn; pass --yes to go ahead") }
            }

            func execute() throws {
                let opened = try vault.openForWriting()
                let (previous, identity) = try opened.rotateIdentity()
                if json { try Console.json(Output(previous: previous, fingerprint: identity.fingerprint)); return }
                Console.print("new identity \(identity.fingerprint)" + (previous.map { " (was \($0))" } ?? "") + "; give recipients the new fingerprint")
            }
        }
    }

    struct Recipient: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "recipient",
            abstract: "Researchers this vault can export to.", subcommands: [Add.self, List.self], defaultSubcommand: List.self)

        func execute() throws {}

        struct Add: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a researcher with the PREFIX.pub file they gave you.")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "A name for the researcher.") var name: String
            @Option(help: ArgumentHelp("Their public key file.", valueName: "PREFIX.pub")) var key: String

            func execute() throws {
                let opened = try vault.openForWriting()
                try opened.addRecipient(name: name, publicKeyFile: key)
                Console.print("recipient '\(name)' added")
            }
        }

        struct List: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the researchers.")
            @OptionGroup var vault: VaultOptions
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable { var name: String; var publicKey: String; var addedAt: String }

            func execute() throws {
                let ledger = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).consentLedger()
                let rows = ledger.recipients.values.sorted { $0.name < $1.name }.map {
                    Output(name: $0.name, publicKey: Data($0.publicKey).base64EncodedString(), addedAt: ISO8601DateFormatter().string(from: $0.at))
                }
                if json { try Console.json(rows); return }
                if rows.isEmpty { Console.note("no recipients yet (vaultctl recipient add NAME --key PREFIX.pub)") }
                for row in rows { Console.print("\(row.name)  \(row.publicKey)  added \(row.addedAt)") }
            }
        }
    }
}
