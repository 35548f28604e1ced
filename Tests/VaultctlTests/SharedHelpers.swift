// Every suite of this target uses the shared test helpers (CLIRunner, TemporaryDirectory).
@_exported import VaultTestSupport
import Foundation
import Testing


/// A vault in a new temporary directory, and `vaultctl` run on it as a person runs it: every
/// command gets `--vault` and `--passphrase-file`. Made through the library with the cheapest KDF
/// (`makeVault(at:passphraseFile:)`) unless `initialized` is false (for what a person meets before
/// there is a vault, `vaultctl init` included).
final class CLIVault {
    let dir: TemporaryDirectory
    let cli: CLIRunner
    /// The vault directory and the passphrase file.
    let path: String
    let passphraseFile: String

    init(_ label: String = #function, cli: CLIRunner = CLIRunner(), initialized: Bool = true) throws {
        dir = TemporaryDirectory(label)
        self.cli = cli
        path = dir.path + "/vault"
        passphraseFile = dir.passphraseFile("pass", "a test passphrase of \(label)")
        if initialized {
            try makeVault(at: path, passphraseFile: passphraseFile)
        }
    }

    func run(_ arguments: [String]) throws -> CLIRunner.Result {
        try cli.run(arguments + ["--vault", path, "--passphrase-file", passphraseFile])
    }

    /// The path of `name` in the temporary directory.
    func file(_ name: String) -> String { dir.file(name) }

    /// Writes `text` to `name` in the temporary directory; returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = dir.file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}
