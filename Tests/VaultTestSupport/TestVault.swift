import Foundation
@_exported import TestSupport
import Vault

/// Creates a vault at `path` with the cheapest KDF, so tests do not spend their time in Argon2id.
/// The one way every suite makes its vault.
public func makeVault(at path: String, passphrase text: String = "old passphrase") throws -> Vault {
    try Vault.create(at: path, passphrase: passphrase(text), kdf: .minimumForTesting, kdfName: "test")
}

/// Creates, for tests that run `vaultctl` on it, a vault at `path` under the passphrase on the
/// first line of `passphraseFile`, with the cheapest KDF: `vaultctl` reads the costs from the
/// keyslot, so each command the test runs unlocks in microseconds instead of Argon2id's
/// interactive 0.1 s (and 64 MiB). The vault is closed again (its writer lock released) on return.
/// Tests of `init` itself run `vaultctl init`.
public func makeVault(at path: String, passphraseFile: String) throws {
    // As vaultctl reads it: the bytes up to the first line feed, without a carriage return before it.
    var line = Array(try Data(contentsOf: URL(fileURLWithPath: passphraseFile)).prefix { $0 != 0x0A })
    if line.last == 0x0D { line.removeLast() }
    _ = try makeVault(at: path, passphrase: String(decoding: line, as: UTF8.self))
}
