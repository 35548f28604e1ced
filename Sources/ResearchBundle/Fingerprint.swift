import Envelope
import SecureMemory

/// What a researcher compares to know who sent a bundle: `xxxx-xxxx-xxxx-xxxx-xxxx-xxxx-xxxx-xxxx`,
/// the first 16 bytes of BLAKE2b-256(signing public key || encryption public key) in hex.
public enum Fingerprint {
    /// The fingerprint of a sender's two public keys.
    public static func of(signingKey: [UInt8], encryptionKey: [UInt8]) -> String {
        let hex = Array(Digest.of(signingKey + encryptionKey).prefix(16)).hex
        return stride(from: 0, to: hex.count, by: 4).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 4)])
        }.joined(separator: "-")
    }

    /// A fingerprint as typed by a person: hex digits only, lowercase.
    public static func normalized(_ fingerprint: String) -> String {
        String(fingerprint.lowercased().filter { $0.isHexDigit })
    }
}
