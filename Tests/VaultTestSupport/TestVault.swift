import Foundation
@_exported import TestSupport
import Vault

/// Creates a vault at `path` with the cheapest KDF, so tests do not spend their time in Argon2id.
/// The one way every suite makes its vault.
public func makeVault(at path: String, passphrase text: String = "old passphrase") throws -> Vault {
    try Vault.create(at: path, passphrase: passphrase(text), kdf: .minimumForTesting, kdfName: "test")
}
