import Envelope
import EventLog
import Foundation
import ResearchBundle
import SecureMemory
import Vault

/// Fuzzes what is inside a bundle's encryption: the entries, the manifest, the file list, paths
/// and hashes. Mutated ciphertext never gets past authentication, so the input here is the
/// plaintext, which the harness signs and seals afresh, as a sender holding `FuzzKeys.senderSigning`
/// would, before `BundleReader.open` sees it (the promises of `BundleFileHarness`).
///
/// When the input's entries start with `manifest.json` and `manifest.sig`, the manifest's
/// placeholders are filled in and the signature replaced by a valid one:
/// `@SENDER_SIGNING@`, `@SENDER_ENCRYPTION@` (base64 keys), `@FINGERPRINT@`, `@RECIPIENT@`, and
/// `@BLAKE2B:k@`, `@BYTES:k@` (the hash and size of data entry k). So kept corpus files stay
/// meaningful whatever the data entries become.
final class BundleContentsHarness: FuzzHarness {
    private let opener: BundleFileHarness
    private let workspace: FuzzWorkspace

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        opener = try BundleFileHarness(workspace: path)
    }

    func seeds() throws -> [FuzzSeed] {
        try opener.seeds().map { seed in
            FuzzSeed(name: (seed.name as NSString).deletingPathExtension + ".contents", bytes: try templated(try decrypted(seed.bytes)))
        }
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        var plaintext = input
        if var entries = Self.entries(input), entries.count >= 2, entries[0].name == "manifest.json", entries[1].name == "manifest.sig" {
            let data = Array(entries.dropFirst(2))
            entries[0].bytes = Array(Self.filled(String(decoding: entries[0].bytes, as: UTF8.self), data: data).utf8)
            entries[1].bytes = FuzzKeys.senderSigning.sign(entries[0].bytes)
            plaintext = Self.encoded(entries)
        }
        let path = workspace.path + "/resealed.hvb"
        try? FileManager.default.removeItem(atPath: path)
        _ = try BundleWriter.write([plaintext], recipientKey: FuzzKeys.recipient.publicKey,
                                   to: path, fileSystem: POSIXFileSystem())
        return try opener.open(path)
    }

    // MARK: Entries (docs/bundle-format.md)

    typealias Entry = (name: String, bytes: [UInt8])

    static func entries(_ plaintext: [UInt8]) -> [Entry]? {
        BundleFormat.entries(plaintext)?.map { ($0.name, Array($0.bytes)) }
    }

    static func encoded(_ entries: [Entry]) -> [UInt8] {
        entries.flatMap { BundleFormat.entry(name: $0.name, bytes: $0.bytes) }
    }

    // MARK: Placeholders

    static func filled(_ manifest: String, data: [Entry]) -> String {
        var text = manifest
            .replacingOccurrences(of: "@SENDER_SIGNING@", with: Data(FuzzKeys.senderSigning.publicKey).base64EncodedString())
            .replacingOccurrences(of: "@SENDER_ENCRYPTION@", with: Data(FuzzKeys.senderEncryption.publicKey).base64EncodedString())
            .replacingOccurrences(of: "@FINGERPRINT@", with: FuzzKeys.senderFingerprint)
            .replacingOccurrences(of: "@RECIPIENT@", with: Data(FuzzKeys.recipient.publicKey).base64EncodedString())
        for (index, entry) in data.enumerated() {
            text = text.replacingOccurrences(of: "@BLAKE2B:\(index)@", with: Digest.of(entry.bytes).hex)
                .replacingOccurrences(of: "@BYTES:\(index)@", with: String(entry.bytes.count))
        }
        return text
    }

    /// A real bundle's plaintext with its keys and hashes turned into placeholders, and without
    /// its padding (the writer adds it again when the harness reseals).
    private func templated(_ plaintext: [UInt8]) throws -> [UInt8] {
        guard var entries = Self.entries(plaintext)?.filter({ $0.name != "padding" }), entries.count >= 2,
              let manifest = try JSONSerialization.jsonObject(with: Data(entries[0].bytes)) as? [String: Any],
              let sender = manifest["sender"] as? [String: Any], let files = manifest["files"] as? [[String: Any]] else {
            throw FuzzInvariantViolation("the seed bundle's contents do not parse")
        }
        var text = String(decoding: entries[0].bytes, as: UTF8.self)
        for (key, placeholder) in [("signingKey", "@SENDER_SIGNING@"), ("encryptionKey", "@SENDER_ENCRYPTION@"), ("fingerprint", "@FINGERPRINT@")] {
            if let value = sender[key] as? String { text = text.replacingOccurrences(of: value, with: placeholder) }
        }
        for (index, file) in files.enumerated() {
            if let hash = file["blake2b"] as? String { text = text.replacingOccurrences(of: hash, with: "@BLAKE2B:\(index)@") }
        }
        // Sizes in file order ("bytes" is a key of the file entries only).
        var index = 0
        while let size = text.range(of: #""bytes"\s*:\s*[0-9]+"#, options: .regularExpression) {
            text.replaceSubrange(size, with: "\"bytes\" : @BYTES:\(index)@")
            index += 1
        }
        entries[0].bytes = Array(text.utf8)
        entries[1].bytes = [UInt8](repeating: 0, count: SigningKeyPair.signatureBytes)
        return Self.encoded(entries)
    }

    // MARK: Envelope (docs/bundle-format.md, "File", version 2)

    private static let magic = Array("HVBUNDL\n".utf8)

    private func decrypted(_ bundle: [UInt8]) throws -> [UInt8] {
        let headerBytes = Self.magic.count + 2 + SecretStream.keyBytes + BoxKeyPair.sealOverhead + SecretStream.headerBytes
        let sealedKeyStart = Self.magic.count + 2
        let key = try FuzzKeys.recipient.open(Array(bundle[sealedKeyStart..<sealedKeyStart + SecretStream.keyBytes + BoxKeyPair.sealOverhead]))
        let decryptor = try SecretStream.Decryptor(key: key, header: Array(bundle[headerBytes - SecretStream.headerBytes..<headerBytes]))
        var plaintext: [UInt8] = []
        var offset = headerBytes
        while offset < bundle.count {
            let length = Int(bundle[offset]) | Int(bundle[offset + 1]) << 8 | Int(bundle[offset + 2]) << 16 | Int(bundle[offset + 3]) << 24
            offset += 4
            try bundle[offset..<offset + length].withUnsafeBytes { try decryptor.pull($0, into: &plaintext) }
            offset += length
        }
        return plaintext
    }
}
