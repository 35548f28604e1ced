import EventLog
import Foundation
@testable import HealthModel
@_exported import TestSupport
@testable import Vault

func passphrase(_ text: String) -> Passphrase {
    var bytes = Array(text.utf8)
    return Passphrase(consuming: &bytes)
}

/// Creates a vault with the cheapest KDF, so tests do not spend their time in Argon2id.
func makeVault(in directory: String, passphrase text: String = "old passphrase") throws -> Vault {
    try Vault.create(at: directory, passphrase: passphrase(text), kdf: .minimumForTesting, kdfName: "test")
}
