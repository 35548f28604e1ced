import Envelope
import EventLog
import Foundation
import ResearchBundle
import SecureMemory
import Vault

/// Keys fixed across runs, so that a corpus file kept in the repository opens the same way in
/// every later run: bundles in the corpus are addressed to `recipient`, and the contents harness
/// signs as `sender`. They protect nothing.
enum FuzzKeys {
    static let recipient = try! BoxKeyPair(secretKey: fixed(0x52))
    static let senderSigning = try! SigningKeyPair(seed: fixed(0x53))
    static let senderEncryption = try! BoxKeyPair(secretKey: fixed(0x45))

    static var senderFingerprint: String {
        Fingerprint.of(signingKey: senderSigning.publicKey, encryptionKey: senderEncryption.publicKey)
    }

    private static func fixed(_ byte: UInt8) -> SecureBytes {
        SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: byte) }
    }

    /// Writes the recipient's key files (`PREFIX.pub`, `PREFIX.key`) in the format `vaultctl keygen` uses.
    static func writeRecipientKeyFiles(prefix: String) throws {
        let publicText = "healthvault-public-key-v1\n" + Data(recipient.publicKey).base64EncodedString() + "\n"
        let secretText = Array("healthvault-secret-key-v1\n".utf8) + SecretBase64.encode(recipient.secretKey) + [0x0A]
        try Data(publicText.utf8).write(to: URL(fileURLWithPath: prefix + ".pub"))
        try Data(secretText).write(to: URL(fileURLWithPath: prefix + ".key"))
    }
}
