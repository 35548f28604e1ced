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
        if let dir = vaultDirectory, !dir.isEmpty { return dir }
        if let dir = Self.environment("HEALTHVAULT_DIR"), !dir.isEmpty { return dir }
        if let data = Self.environment("XDG_DATA_HOME"), !data.isEmpty { return data + "/healthvault" }
        let home = Self.environment("HOME") ?? NSHomeDirectory()
        return home + "/.local/share/healthvault"
    }

    /// One environment variable, read with getenv(3): `ProcessInfo.environment` would copy every
    /// variable, `HEALTHVAULT_PASSPHRASE` included, into Swift strings that are never wiped.
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
