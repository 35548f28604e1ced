import Envelope
import EventLog
import Foundation

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
/// signature, the sender, every file's hash) and only then writes its files.
public enum BundleReader {
    public static func open(_ path: String, keyFile: String, outputDirectory requested: String, expectSender: String? = nil) throws -> OpenedBundle {
        func refuse(_ reason: String) -> VaultError { .bundleRefused(path: path, reason: reason) }
        // `out/` and `out` are one directory; the staging directory goes beside it, not inside.
        let outputDirectory = URL(fileURLWithPath: requested).standardizedFileURL.path
        if FileManager.default.fileExists(atPath: outputDirectory),
           !((try? FileManager.default.contentsOfDirectory(atPath: outputDirectory))?.isEmpty ?? false) {
            throw VaultError.fileExists(path: outputDirectory)
        }
        let keys = try RecipientKeyFiles.readSecretKey(keyFile)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw refuse("cannot be read") }
        defer { try? handle.close() }
        func read(_ n: Int) throws -> [UInt8] { Array(try handle.read(upToCount: n) ?? Data()) }

        let prefix = try read(10)
        guard prefix.count == 10, Array(prefix[0..<8]) == BundleFormat.magic else { throw refuse("not a healthvault bundle") }
        let version = UInt16(prefix[8]) | UInt16(prefix[9]) << 8
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
        var plaintext: [UInt8] = []
        defer { secureZero(&plaintext) }
        // Reserved from the file size up front, so that growing leaves no freed plaintext behind.
        let fileSize = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
        plaintext.reserveCapacity(min(max(fileSize - headerBytes, 0), BundleFormat.maximumPlaintext))
        do {
            var index = 0
            while true {
                let lengthBytes = try read(4)
                if lengthBytes.isEmpty { break }
                guard !decryptor.finished else { throw EnvelopeError.trailingData }
                guard lengthBytes.count == 4 else { throw EnvelopeError.truncated }
                let length = Int(UInt32(lengthBytes[0]) | UInt32(lengthBytes[1]) << 8 | UInt32(lengthBytes[2]) << 16 | UInt32(lengthBytes[3]) << 24)
                guard length >= SecretStream.chunkOverhead, length <= BundleFormat.chunkSize + SecretStream.chunkOverhead else {
                    throw EnvelopeError.chunkDamaged(index: index)
                }
                index += 1
                guard plaintext.count + length <= BundleFormat.maximumPlaintext else { throw refuse("larger than this build opens") }
                let chunk = try read(length)
                guard chunk.count == length else { throw EnvelopeError.truncated }
                try chunk.withUnsafeBytes { try decryptor.pull($0, into: &plaintext) }
            }
            guard decryptor.finished else { throw EnvelopeError.truncated }
        } catch let error as EnvelopeError {
            throw refuse("\(error)")
        }

        guard var entries = BundleFormat.entries(plaintext) else { throw refuse("malformed contents") }
        guard entries.count >= 2, entries[0].name == BundleFormat.manifestName, entries[1].name == BundleFormat.signatureName else {
            throw refuse("malformed contents (no signed manifest)")
        }
        if version >= 2, entries.last?.name == BundleFormat.paddingName {
            guard entries.last!.bytes.allSatisfy({ $0 == 0 }) else { throw refuse("malformed contents (padding)") }
            entries.removeLast()
        }
        let manifestBytes = Array(entries[0].bytes)
        guard let manifest = try? JSONDecoder().decode(BundleManifest.self, from: Data(manifestBytes)),
              manifest.format == "healthvault-bundle", manifest.version == Int(version),
              ISO8601DateFormatter().date(from: manifest.createdAt) != nil else { throw refuse("malformed manifest") }
        guard let senderKey = headerSenderKey ?? manifest.sender.signingKey.flatMap({ Data(base64Encoded: $0) }).map(Array.init),
              senderKey.count == SigningKeyPair.publicKeyBytes,
              SigningKeyPair.verify(Array(entries[1].bytes), of: manifestBytes, publicKey: senderKey) else {
            throw refuse("the manifest's signature does not verify")
        }
        guard manifest.sender.signingKey == Data(senderKey).base64EncodedString(),
              let encryptionKey = manifest.sender.encryptionKey.flatMap({ Data(base64Encoded: $0) }), encryptionKey.count == 32,
              manifest.sender.fingerprint == VaultIdentity.fingerprint(signingKey: senderKey, encryptionKey: Array(encryptionKey)) else {
            throw refuse("the manifest names another sender than the one that signed it")
        }
        let fingerprint = manifest.sender.fingerprint!
        if let expectSender, VaultIdentity.normalized(fingerprint: expectSender) != VaultIdentity.normalized(fingerprint: fingerprint) {
            throw refuse("it was signed by \(fingerprint), not the expected sender")
        }
        guard manifest.recipient.publicKey == Data(keys.publicKey).base64EncodedString() else {
            throw refuse("its manifest is addressed to another key")
        }
        let dataEntries = entries.dropFirst(2)
        guard dataEntries.map(\.name) == manifest.files.map(\.path) else { throw refuse("its files do not match the manifest") }
        for (entry, file) in zip(dataEntries, manifest.files) {
            guard isSafe(file.path), entry.bytes.count == file.bytes, Digest.of(entry.bytes).hex == file.blake2b else {
                throw refuse("\(file.path) does not match its hash in the manifest")
            }
        }

        // Everything checked: write.
        let staging = outputDirectory + ".tmp." + RandomIdentifier.bytes(8).hex
        do {
            try FileManager.default.createDirectory(atPath: staging + "/data", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try NewFile.write(manifestBytes, to: staging + "/" + BundleFormat.manifestName, sync: false)
            for entry in dataEntries { try NewFile.write(entry.bytes, to: staging + "/" + entry.name, sync: false) }
            // rename(2) takes the place of an empty directory atomically and refuses a non-empty one
            // (something written there meanwhile is never deleted).
            guard rename(staging, outputDirectory) == 0 else {
                throw errno == ENOTEMPTY || errno == EEXIST ? VaultError.fileExists(path: requested) : CocoaError(.fileWriteUnknown)
            }
        } catch let error as VaultError {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw VaultError.cannotWrite(path: outputDirectory, reason: "could not be written: \(error.localizedDescription)")
        }
        return OpenedBundle(senderFingerprint: fingerprint, recipient: manifest.recipient.name ?? "", createdAt: manifest.createdAt,
                            files: [BundleFormat.manifestName] + manifest.files.map(\.path), counts: manifest.counts)
    }

    private static func isSafe(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count == 2, parts[0] == "data" else { return false }
        let name = parts[1]
        return (name.hasSuffix(".ndjson") || name.hasSuffix(".csv")) && name.allSatisfy { $0.isLetter || $0 == "." || $0 == "-" }
    }
}
