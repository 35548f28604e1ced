import BinaryCoding
import Envelope
import Foundation
import SecureMemory

/// A bundle read as a stream of checked parts, pulled one at a time with `next()`: first the
/// signed manifest (signature, sender, recipient and file list checked before any data), then
/// each data file's bytes as they are decrypted, each file closed only once its size and hash
/// match the manifest; `next()` returns nil only after the final chunk, the padding and every
/// file checked out. Whoever consumes the bytes must hold them provisionally until then
/// (`bundle open` in a staging folder, `study load` in an open transaction).
///
/// Memory is bounded by one chunk (1 MiB of plaintext) and the manifest, whatever the size.
public final class BundleStream {
    /// One checked part of the bundle.
    public enum Part {
        /// The manifest, its signature verified: before any data.
        case manifest(BundleManifestInfo)
        /// A data file the manifest lists begins.
        case fileBegin(BundleFileInfo)
        /// The next bytes of the current file (authenticated by the stream; its hash is checked
        /// when the file ends).
        case bytes(ArraySlice<UInt8>)
        /// The current file's size and hash matched the manifest.
        case fileEnd(BundleFileInfo)
    }

    public let path: String

    private let handle: FileHandle
    private let decryptor: SecretStream.Decryptor
    private let check: ContentsCheck
    private var entries = BundleEntryStream()
    private var plaintext: [UInt8] = []
    private var pending: [Part] = []
    private var pendingIndex = 0
    private var chunkIndex = 0
    private var done = false

    /// Opens `path` with the researcher's secret key: the header, the sealed stream key.
    /// `expectSender` (a fingerprint) refuses a bundle any other vault signed.
    public init(path: String, keyFile: String, expectSender: String?) throws {
        self.path = path
        func refuse(_ reason: String) -> BundleError { .refused(path: path, reason: reason) }
        let keys = try RecipientKeyFiles.readSecretKey(keyFile)
        guard let handle = FileHandle(forReadingAtPath: path) else { throw refuse("cannot be read") }
        self.handle = handle
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
        decryptor = try SecretStream.Decryptor(key: streamKey, header: streamHeader)
        check = ContentsCheck(path: path, version: version, headerSenderKey: headerSenderKey, recipientKey: keys.publicKey, expectSender: expectSender)
        plaintext.reserveCapacity(BundleFormat.chunkSize)
    }

    deinit {
        secureZero(&plaintext)
        try? handle.close()
    }

    /// The next checked part; nil once the whole bundle checked out. Throws `BundleError.refused`
    /// naming the bundle for anything that does not.
    public func next() throws -> Part? {
        while pendingIndex == pending.count {
            if done { return nil }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            do { try readChunk() } catch let error as EnvelopeError {
                throw BundleError.refused(path: path, reason: "\(error)")
            }
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    private func readChunk() throws {
        func read(_ n: Int) throws -> [UInt8] { Array(try handle.read(upToCount: n) ?? Data()) }
        let lengthBytes = try read(4)
        if lengthBytes.isEmpty {
            guard decryptor.finished else { throw EnvelopeError.truncated }
            guard entries.isAtEntryBoundary else { throw check.refuse("malformed contents") }
            try check.finish()
            done = true
            return
        }
        guard !decryptor.finished else { throw EnvelopeError.trailingData }
        guard let length32 = UInt32(littleEndianBytes: lengthBytes) else { throw EnvelopeError.truncated }
        let length = Int(length32)
        guard length >= SecretStream.chunkOverhead, length <= BundleFormat.chunkSize + SecretStream.chunkOverhead else {
            throw EnvelopeError.chunkDamaged(index: chunkIndex)
        }
        chunkIndex += 1
        let chunk = try read(length)
        guard chunk.count == length else { throw EnvelopeError.truncated }
        secureZero(&plaintext)
        plaintext.removeAll(keepingCapacity: true)
        try chunk.withUnsafeBytes { try decryptor.pull($0, into: &plaintext) }
        try entries.feed(plaintext[...]) { event in
            if let part = try check.handle(event) { pending.append(part) }
        }
    }
}

/// The manifest of a bundle whose signature and sender checked out.
public struct BundleManifestInfo: Sendable {
    public var senderFingerprint: String
    public var recipient: String
    public var createdAt: String
    public var consents: [ConsentReceipt]
    public var files: [BundleFileInfo]
    public var counts: [String: Int]
    /// The bundle an `export --since-last` follows (its hash), nil for a full export.
    public var follows: String?
    /// The manifest's exact bytes, as signed.
    public var bytes: [UInt8]
}

/// A data file a manifest lists.
public struct BundleFileInfo: Sendable, Equatable {
    /// `data/activity.ndjson`.
    public var path: String
    public var category: String
    /// `raw`, `hourly` or `daily`.
    public var granularity: String
    /// `ndjson` or `csv`.
    public var format: String
    public var lines: Int
    public var bytes: Int
}

/// Checks a bundle's entries as they stream past: the manifest and its signature first (sender,
/// recipient, fingerprint, the file list), then each data file against the manifest's name, size
/// and hash, then the padding. Hands on what checked out as `BundleStream.Part`s.
final class ContentsCheck {
    let path: String
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
    private var file: (digest: Digest, expected: BundleManifest.File)?
    private var filesDone = 0
    private var sawPadding = false

    init(path: String, version: UInt16, headerSenderKey: [UInt8]?, recipientKey: [UInt8], expectSender: String?) {
        self.path = path
        self.version = version
        self.headerSenderKey = headerSenderKey
        self.recipientKey = recipientKey
        self.expectSender = expectSender
    }

    func refuse(_ reason: String) -> BundleError { .refused(path: path, reason: reason) }

    func handle(_ event: BundleEntryStream.Event) throws -> BundleStream.Part? {
        switch event {
        case .begin(let name, let length):
            return try begin(name: name, length: length)
        case .bytes(let bytes):
            if let file {
                bytes.withUnsafeBytes { file.digest.update($0) }
                return .bytes(bytes)
            } else if current?.name == BundleFormat.paddingName {
                guard bytes.allSatisfy({ $0 == 0 }) else { throw refuse("malformed contents (padding)") }
            } else if entryCount == 1 {
                manifestBytes += bytes
            } else {
                signature += bytes
            }
            return nil
        case .end:
            return try end()
        }
    }

    private func begin(name: String, length: UInt64) throws -> BundleStream.Part? {
        guard !sawPadding else { throw refuse("malformed contents (padding)") }
        entryCount += 1
        current = (name, length)
        switch entryCount {
        case 1:
            guard name == BundleFormat.manifestName, length <= UInt64(BundleReader.maximumManifest) else {
                throw refuse("malformed contents (no signed manifest)")
            }
            return nil
        case 2:
            guard name == BundleFormat.signatureName, length == UInt64(SigningKeyPair.signatureBytes) else {
                throw refuse("malformed contents (no signed manifest)")
            }
            return nil
        default:
            guard let manifest else { throw refuse("malformed contents") }
            if version >= 2, name == BundleFormat.paddingName, filesDone == manifest.files.count {
                sawPadding = true
                return nil
            }
            // Compared byte for byte: Swift's == would take a decomposed é for a precomposed one.
            guard filesDone < manifest.files.count, Array(manifest.files[filesDone].path.utf8) == Array(name.utf8) else {
                throw refuse("its files do not match the manifest")
            }
            let expected = manifest.files[filesDone]
            guard length == UInt64(exactly: expected.bytes) else {
                throw refuse("\(expected.path) does not match its hash in the manifest")
            }
            file = (Digest(), expected)
            return .fileBegin(expected.info)
        }
    }

    private func end() throws -> BundleStream.Part? {
        defer { current = nil }
        switch entryCount {
        case 1: return nil
        case 2:
            try checkManifest()
            let m = manifest!
            return .manifest(BundleManifestInfo(senderFingerprint: m.sender.fingerprint!, recipient: m.recipient.name ?? "", createdAt: m.createdAt,
                                                consents: m.consents, files: m.files.map(\.info), counts: m.counts, follows: m.follows,
                                                bytes: manifestBytes))
        default:
            guard let done = file else { return nil }
            file = nil
            guard done.digest.finish().hex == done.expected.blake2b else {
                throw refuse("\(done.expected.path) does not match its hash in the manifest")
            }
            filesDone += 1
            return .fileEnd(done.expected.info)
        }
    }

    /// The manifest and its signature, once both are in: before any data.
    private func checkManifest() throws {
        guard let manifest = try? JSONDecoder().decode(BundleManifest.self, from: Data(manifestBytes)),
              manifest.format == "healthvault-bundle", manifest.version == Int(version),
              ManifestDate.parse(manifest.createdAt) != nil else { throw refuse("malformed manifest") }
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
        guard manifest != nil, current == nil, filesDone == manifest!.files.count else {
            throw refuse(manifest == nil ? "malformed contents (no signed manifest)" : "its files do not match the manifest")
        }
    }
}

extension BundleManifest.File {
    var info: BundleFileInfo {
        BundleFileInfo(path: path, category: category, granularity: granularity, format: format, lines: lines, bytes: bytes)
    }
}
