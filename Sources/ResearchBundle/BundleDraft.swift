import Envelope
import Foundation
import SecureMemory

/// What a bundle will hold, before it is signed and sealed: the data files with what they are,
/// the consents they were written under, and who sends it to whom. `entries(signedBy:)` turns it
/// into the plaintext entries `BundleWriter.write` seals (docs/bundle-format.md).
public struct BundleDraft {
    /// One data file: `data/<category>.ndjson` or `.csv`.
    public struct DataFile {
        public var path: String
        public var category: String
        public var granularity: String
        /// `ndjson` or `csv`.
        public var format: String
        public var lines: Int
        public var bytes: [UInt8]

        public init(path: String, category: String, granularity: String, format: String, lines: Int, bytes: [UInt8]) {
            self.path = path
            self.category = category
            self.granularity = granularity
            self.format = format
            self.lines = lines
            self.bytes = bytes
        }
    }

    public var createdAt: Date
    public var recipientName: String
    public var recipientKey: [UInt8]
    /// The hash of the log's last frame the export read (hex): where in the sender's history it stands.
    public var chainHash: String
    public var consents: [ConsentReceipt]
    public var files: [DataFile]
    /// Lines per category.
    public var counts: [String: Int]
    /// `export --since-last`: the hash of the bundle this one follows.
    public var follows: String?

    public init(createdAt: Date, recipientName: String, recipientKey: [UInt8], chainHash: String,
                consents: [ConsentReceipt], files: [DataFile], counts: [String: Int]) {
        self.createdAt = createdAt
        self.recipientName = recipientName
        self.recipientKey = recipientKey
        self.chainHash = chainHash
        self.consents = consents
        self.files = files
        self.counts = counts
    }

    /// The plaintext entries: the manifest naming the sender's keys, its Ed25519 signature, then
    /// the data files.
    public func entries(signedBy signing: SigningKeyPair, encryptionKey: [UInt8]) throws -> [[UInt8]] {
        let manifest = BundleManifest(
            createdAt: ISO8601DateFormatter().string(from: createdAt),
            sender: .init(fingerprint: Fingerprint.of(signingKey: signing.publicKey, encryptionKey: encryptionKey),
                          signingKey: Data(signing.publicKey).base64EncodedString(),
                          encryptionKey: Data(encryptionKey).base64EncodedString()),
            recipient: .init(name: recipientName, publicKey: Data(recipientKey).base64EncodedString()),
            logPosition: .init(sequence: nil, events: nil, chainHash: chainHash),
            consents: consents,
            files: files.map { file in
                BundleManifest.File(path: file.path, category: file.category, granularity: file.granularity, format: file.format,
                                    lines: file.lines, bytes: file.bytes.count, blake2b: Digest.of(file.bytes).hex)
            },
            counts: counts, follows: follows)
        let manifestBytes = try manifest.encoded()
        return [BundleFormat.entry(name: BundleFormat.manifestName, bytes: manifestBytes),
                BundleFormat.entry(name: BundleFormat.signatureName, bytes: signing.sign(manifestBytes))]
            + files.map { BundleFormat.entry(name: $0.path, bytes: $0.bytes) }
    }
}
