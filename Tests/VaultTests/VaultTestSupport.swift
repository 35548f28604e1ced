import EventLog
import Foundation
@testable import Vault

/// A fresh directory per test, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("hvv-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func passphrase(_ text: String) -> Passphrase {
    var bytes = Array(text.utf8)
    return Passphrase(consuming: &bytes)
}

/// Creates a vault with the cheapest KDF, so tests do not spend their time in Argon2id.
func makeVault(in directory: String, passphrase text: String = "old passphrase") throws -> Vault {
    try Vault.create(at: directory, passphrase: passphrase(text), kdf: .minimumForTesting, kdfName: "test")
}
