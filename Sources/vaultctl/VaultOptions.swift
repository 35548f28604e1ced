import ArgumentParser
import Foundation

/// Options every command that touches a vault shares: where it is and how to get the passphrase.
struct VaultOptions: ParsableArguments {
    @Option(name: .customLong("vault"), help: ArgumentHelp(
        "Vault directory (default: $HEALTHVAULT_DIR, else $XDG_DATA_HOME/healthvault).", valueName: "DIR"))
    var vaultDirectory: String?

    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "Read the passphrase from the first line of FILE (default: $HEALTHVAULT_PASSPHRASE, else a prompt).",
        valueName: "FILE"))
    var passphraseFile: String?

    /// The vault directory the user means, per the spec's order of sources.
    var directory: String {
        let environment = ProcessInfo.processInfo.environment
        if let dir = vaultDirectory, !dir.isEmpty { return dir }
        if let dir = environment["HEALTHVAULT_DIR"], !dir.isEmpty { return dir }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/healthvault" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/healthvault"
    }
}
