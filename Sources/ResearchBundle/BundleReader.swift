import BinaryCoding
import Envelope
import EventLog
import Foundation
import SecureMemory

/// What `bundle open` found and wrote.
public struct OpenedBundle: Sendable {
    public var senderFingerprint: String
    public var recipient: String
    public var createdAt: String
    /// Files written under the output directory, `manifest.json` first.
    public var files: [String]
    public var counts: [String: Int]
}

/// The researcher's side: checks a bundle whole (key, every chunk and the final one, the
/// signature, the sender, every file's hash) and only then gives its files their place.
///
/// It streams, in memory bounded by one chunk (1 MiB) and the manifest whatever the bundle's
/// size: the signed manifest comes first and is checked before any data; each data file is
/// written into a staging folder beside DIR (0700, files 0600) as it is decrypted, and hashed on
/// the way; only when the last chunk, every file's size and hash and the padding have checked out
/// is the folder renamed to DIR. A refused bundle leaves nothing: the folder is removed.
public enum BundleReader {
    /// The largest manifest read (a year of consents and files is a few KiB).
    static let maximumManifest = 16 << 20

    public static func open(_ path: String, keyFile: String, outputDirectory requested: String, expectSender: String? = nil) throws -> OpenedBundle {
        func refuse(_ reason: String) -> BundleError { .refused(path: path, reason: reason) }
        // `out/` and `out` are one directory; the staging directory goes beside it, not inside.
        let outputDirectory = URL(fileURLWithPath: requested).standardizedFileURL.path
        if FileManager.default.fileExists(atPath: outputDirectory),
           !((try? FileManager.default.contentsOfDirectory(atPath: outputDirectory))?.isEmpty ?? false) {
            throw BundleError.fileExists(path: outputDirectory)
        }
        let keys = try RecipientKeyFiles.readSecretKey(keyFile)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw refuse("cannot be read") }
        defer { try? handle.close() }
        func read(_ n: Int) throws -> [UInt8] { Array(try handle.read(upToCount: n) ?? Data()) }

        let prefix = try read(10)
        guard prefix.count == 10, Array(prefix[0..<8]) == BundleFormat.magic else { throw refuse("not a healthvault bundle") }
        let version = UInt16(littleEndianBytes: prefix[8..<10])!
        guard version == 1 || version == 2 else { throw refuse("bundle format version \(version) is not supported by this build") }
        let headerBytes = BundleFormat.headerBytes(version: version)
        let header = prefix + (try read(headerBytes - 10))
        guard header.count == headerBytes else { throw refuse("not a healthvault bundle") }
        var cursor = 10
        func take(_ n: Int) -> [UInt8] { defer { cursor += n }; return Array(header[cursor..<cursor + n]) }
        // Version 1 named the sender in the clear; version 2 only inside the manifest.
        let headerSenderKey = version == 1 ? take(SigningKeyPair.publicKeyBytes) : nil
        let sealedKey = take(BundleFormat.sealedKeyBytes)
        let streamHeader = take(SecretStream.headerBytes)

        let streamKey: SecureBytes
        do { streamKey = try keys.open(sealedKey) } catch { throw refuse("it is not addressed to this key (a bundle for another recipient)") }
        let decryptor = try SecretStream.Decryptor(key: streamKey, header: streamHeader)

        removeStaleStaging(of: outputDirectory)
        let staging = outputDirectory + ".tmp." + RandomBytes.make(8).hex
        let contents = ContentsCheck(path: path, staging: staging, version: version, headerSenderKey: headerSenderKey,
                                     recipientKey: keys.publicKey, expectSender: expectSender)
        var entries = BundleEntryStream()
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(BundleFormat.chunkSize)
        defer { secureZero(&plaintext) }
        do {
            var index = 0
            while true {
                let lengthBytes = try read(4)
                if lengthBytes.isEmpty { break }
                guard !decryptor.finished else { throw EnvelopeError.trailingData }
                guard let length32 = UInt32(littleEndianBytes: lengthBytes) else { throw EnvelopeError.truncated }
                let length = Int(length32)
                guard length >= SecretStream.chunkOverhead, length <= BundleFormat.chunkSize + SecretStream.chunkOverhead else {
                    throw EnvelopeError.chunkDamaged(index: index)
                }
                index += 1
                let chunk = try read(length)
                guard chunk.count == length else { throw EnvelopeError.truncated }
                secureZero(&plaintext)
                plaintext.removeAll(keepingCapacity: true)
                try chunk.withUnsafeBytes { try decryptor.pull($0, into: &plaintext) }
                try entries.feed(plaintext[...]) { try contents.handle($0) }
            }
            guard decryptor.finished else { throw EnvelopeError.truncated }
            guard entries.isAtEntryBoundary else { throw refuse("malformed contents") }
            try contents.finish()
        } catch let error as EnvelopeError {
            contents.discard()
            throw refuse("\(error)")
        } catch {
            contents.discard()
            throw error
        }

        // Everything checked: the staging folder takes DIR's place.
        do {
            // rename(2) takes the place of an empty directory atomically and refuses a non-empty one
            // (something written there meanwhile is never deleted).
            guard rename(staging, outputDirectory) == 0 else {
                throw errno == ENOTEMPTY || errno == EEXIST ? BundleError.fileExists(path: requested) : CocoaError(.fileWriteUnknown)
            }
        } catch let error as BundleError {
            contents.discard()
            throw error
        } catch {
            contents.discard()
            throw BundleError.cannotWrite(path: outputDirectory, reason: "could not be written: \(error.localizedDescription)")
        }
        let manifest = contents.manifest!
        return OpenedBundle(senderFingerprint: manifest.sender.fingerprint!, recipient: manifest.recipient.name ?? "", createdAt: manifest.createdAt,
                            files: [BundleFormat.manifestName] + manifest.files.map(\.path), counts: manifest.counts)
    }

    /// Checks a bundle's entries as they stream past and writes its files into `staging`: the
    /// manifest and its signature first (sender, recipient, fingerprint, the file list), then each
    /// data file against the manifest's name, size and hash, then the padding.
    private final class ContentsCheck {
        let path: String
        let staging: String
        let version: UInt16
        let headerSenderKey: [UInt8]?
        let recipientKey: [UInt8]
        let expectSender: String?

        private(set) var manifest: BundleManifest?
        private var manifestBytes: [UInt8] = []
        private var signature: [UInt8] = []
        /// Entries begun so far.
        private var entryCount = 0
        private var current: (name: String, length: UInt64)?
        private var file: (output: NewFile, digest: Digest, expected: BundleManifest.File)?
        private var filesDone = 0
        private var sawPadding = false
        private var stagingMade = false

        init(path: String, staging: String, version: UInt16, headerSenderKey: [UInt8]?, recipientKey: [UInt8], expectSender: String?) {
            self.path = path
            self.staging = staging
            self.version = version
            self.headerSenderKey = headerSenderKey
            self.recipientKey = recipientKey
            self.expectSender = expectSender
        }

        func refuse(_ reason: String) -> BundleError { .refused(path: path, reason: reason) }

        func handle(_ event: BundleEntryStream.Event) throws {
            switch event {
            case .begin(let name, let length):
                try begin(name: name, length: length)
            case .bytes(let bytes):
                if let file {
                    try bytes.withUnsafeBytes { raw in
                        file.digest.update(raw)
                        try file.output.write(raw)
                    }
                } else if current?.name == BundleFormat.paddingName {
                    guard bytes.allSatisfy({ $0 == 0 }) else { throw refuse("malformed contents (padding)") }
                } else if entryCount == 1 {
                    manifestBytes += bytes
                } else {
                    signature += bytes
                }
            case .end:
                try end()
            }
        }

        private func begin(name: String, length: UInt64) throws {
            guard !sawPadding else { throw refuse("malformed contents (padding)") }
            entryCount += 1
            current = (name, length)
            switch entryCount {
            case 1:
                guard name == BundleFormat.manifestName, length <= UInt64(BundleReader.maximumManifest) else {
                    throw refuse("malformed contents (no signed manifest)")
                }
            case 2:
                guard name == BundleFormat.signatureName, length == UInt64(SigningKeyPair.signatureBytes) else {
                    throw refuse("malformed contents (no signed manifest)")
                }
            default:
                guard let manifest else { throw refuse("malformed contents") }
                if version >= 2, name == BundleFormat.paddingName, filesDone == manifest.files.count {
                    sawPadding = true
                    return
                }
                // Compared byte for byte: Swift's == would take a decomposed é for a precomposed one.
                guard filesDone < manifest.files.count, Array(manifest.files[filesDone].path.utf8) == Array(name.utf8) else {
                    throw refuse("its files do not match the manifest")
                }
                let expected = manifest.files[filesDone]
                guard length == UInt64(exactly: expected.bytes) else {
                    throw refuse("\(expected.path) does not match its hash in the manifest")
                }
                try makeStaging()
                file = (try NewFile(creating: staging + "/" + expected.path), Digest(), expected)
            }
        }

        private func end() throws {
            defer { current = nil }
            switch entryCount {
            case 1: break
            case 2: try checkManifest()
            default:
                guard let done = file else { return }
                file = nil
                guard done.digest.finish().hex == done.expected.blake2b else {
                    throw refuse("\(done.expected.path) does not match its hash in the manifest")
                }
                filesDone += 1
            }
        }

        /// The manifest and its signature, once both are in: before any data is written.
        private func checkManifest() throws {
            guard let manifest = try? JSONDecoder().decode(BundleManifest.self, from: Data(manifestBytes)),
                  manifest.format == "healthvault-bundle", manifest.version == Int(version),
                  ISO8601DateFormatter().date(from: manifest.createdAt) != nil else { throw refuse("malformed manifest") }
            guard let senderKey = headerSenderKey ?? manifest.sender.signingKey.flatMap({ Data(base64Encoded: $0) }).map(Array.init),
                  senderKey.count == SigningKeyPair.publicKeyBytes,
                  SigningKeyPair.verify(signature, of: manifestBytes, publicKey: senderKey) else {
                throw refuse("the manifest's signature does not verify")
            }
            guard manifest.sender.signingKey == Data(senderKey).base64EncodedString(),
                  let encryptionKey = manifest.sender.encryptionKey.flatMap({ Data(base64Encoded: $0) }), encryptionKey.count == 32,
                  manifest.sender.fingerprint == Fingerprint.of(signingKey: senderKey, encryptionKey: Array(encryptionKey)) else {
                throw refuse("the manifest names another sender than the one that signed it")
            }
            let fingerprint = manifest.sender.fingerprint!
            if let expectSender, Fingerprint.normalized(expectSender) != Fingerprint.normalized(fingerprint) {
                throw refuse("it was signed by \(fingerprint), not the expected sender")
            }
            guard manifest.recipient.publicKey == Data(recipientKey).base64EncodedString() else {
                throw refuse("its manifest is addressed to another key")
            }
            // Every listed file a safe name under data/ with a size that can be, listed once.
            guard manifest.files.allSatisfy({ BundleReader.isSafe($0.path) && $0.bytes >= 0 }),
                  Set(manifest.files.map { Array($0.path.utf8) }).count == manifest.files.count else {
                throw refuse("its files do not match the manifest")
            }
            self.manifest = manifest
        }

        /// After the last chunk: every file of the manifest was there and whole.
        func finish() throws {
            guard let manifest, current == nil, filesDone == manifest.files.count else {
                throw refuse(manifest == nil ? "malformed contents (no signed manifest)" : "its files do not match the manifest")
            }
            try makeStaging()
            try NewFile.write(manifestBytes, to: staging + "/" + BundleFormat.manifestName, sync: false)
        }

        private func makeStaging() throws {
            guard !stagingMade else { return }
            do {
                try FileManager.default.createDirectory(atPath: staging + "/data", withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw BundleError.cannotWrite(path: staging, reason: "could not be created: \(error.localizedDescription)")
            }
            stagingMade = true
        }

        /// Removes whatever was written: nothing of a refused bundle stays.
        func discard() {
            file = nil
            if stagingMade { try? FileManager.default.removeItem(atPath: staging) }
        }
    }

    /// Removes what an open killed part-way left beside `outputDirectory` (`DIR.tmp.<16 hex>`
    /// folders holding decrypted files), so plaintext does not linger past the next open.
    private static func removeStaleStaging(of outputDirectory: String) {
        let parent = (outputDirectory as NSString).deletingLastPathComponent
        let prefix = (outputDirectory as NSString).lastPathComponent + ".tmp."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.isEmpty ? "." : parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            let suffix = name.dropFirst(prefix.count)
            guard suffix.count == 16, suffix.allSatisfy(\.isHexDigit) else { continue }
            try? FileManager.default.removeItem(atPath: (parent.isEmpty ? "." : parent) + "/" + name)
        }
    }

    static func isSafe(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count == 2, parts[0] == "data" else { return false }
        let name = parts[1]
        return (name.hasSuffix(".ndjson") || name.hasSuffix(".csv")) && name.allSatisfy { $0.isLetter || $0 == "." || $0 == "-" }
    }
}
