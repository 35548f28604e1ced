import Envelope
import EventLog
import Foundation
@testable import HealthModel
import Projections
@testable import ResearchBundle
import SecureMemory
import SyntheticHealth
import Testing
import VaultTestSupport
@testable import Vault

/// A bundle opens only whole, for its recipient, from the expected sender; otherwise one clear
/// error and no output.
@Suite struct BundleTamperTests {
    final class Made {
        let dir = TemporaryDirectory("bundle")
        let bundle: String
        let key: String
        let fingerprint: String
        let bytes: [UInt8]

        init(days: Int = 4) throws {
            let vault = try makeVault(at: dir.path + "/vault", passphrase: "p")
            let zip = dir.path + "/export.zip"
            try SyntheticExport.writeZip(to: zip, options: .init(days: days, firstDay: (2024, 5, 1), tripStart: 100))
            _ = try vault.importFiles([zip])
            key = dir.path + "/lab"
            try RecipientKeyFiles.generate(prefix: key)
            try vault.addRecipient(name: "Sleep Laboratory", publicKeyFile: key + ".pub")
            try vault.grant(recipient: "Sleep Laboratory", categories: [.activity, .heart], from: nil, to: nil, granularity: .raw, expires: nil, purpose: nil)
            bundle = dir.path + "/b.bundle"
            _ = try vault.export(to: "Sleep Laboratory", path: bundle)
            fingerprint = try vault.identity().fingerprint
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: bundle)))
        }

        func attempt(_ bytes: [UInt8], key: String? = nil, expect: String? = nil) -> String? {
            let path = dir.path + "/attempt.bundle", out = dir.path + "/attempt-out"
            try? FileManager.default.removeItem(atPath: out)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            do {
                _ = try BundleReader.open(path, keyFile: (key ?? self.key) + ".key", outputDirectory: out, expectSender: expect)
                return nil
            } catch {
                #expect(!FileManager.default.fileExists(atPath: out), "output written for a refused bundle")
                #expect(!"\(error)".contains("\n"))
                return "\(error)"
            }
        }
    }

    @Test func anIntactBundleOpensForItsRecipientAndExpectedSender() throws {
        let made = try Made()
        #expect(made.attempt(made.bytes, expect: made.fingerprint.uppercased()) == nil)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: made.dir.path + "/attempt-out/manifest.json"))) as! [String: Any]
        #expect((manifest["counts"] as? [String: Int])?.keys.sorted() == ["activity", "heart"])
    }

    /// What a change at `position` of a version-2 bundle must be refused with (docs/bundle-format.md,
    /// "File"): the magic, the version, the sealed key, the stream header, then the chunks, whose
    /// length fields can also make the file look cut short.
    static func expectedRefusal(at position: Int, version: UInt16) -> [String] {
        switch position {
        case 0..<8: ["not a healthvault bundle"]
        case 8..<10: version == 1 ? ["not addressed to this key"] : ["bundle format version \(version) is not supported"]
        case 10..<(10 + BundleFormat.sealedKeyBytes): ["not addressed to this key"]
        case ..<BundleFormat.headerBytes: ["chunk 0 fails authentication"]
        default: ["fails authentication", "truncated"]
        }
    }

    @Test func everyFlippedByteIsRefusedForWhatItChanged() throws {
        let made = try Made()
        var rng = SeededRandom(seed: 7)
        var positions = [0, 9, 10, 45, 95, 130, 170, made.bytes.count - 1, made.bytes.count - 20]
        for _ in 0..<40 { positions.append(rng.next(made.bytes.count)) }
        for position in positions {
            var tampered = made.bytes
            tampered[position] ^= UInt8(1 << rng.next(8))
            let version = UInt16(tampered[8]) | UInt16(tampered[9]) << 8
            let message = made.attempt(tampered) ?? "accepted"
            #expect(Self.expectedRefusal(at: position, version: version).contains { message.contains($0) }, "flip at \(position): \(message)")
        }
    }

    @Test func everyTruncationIsRefused() throws {
        let made = try Made()
        var rng = SeededRandom(seed: 11)
        var cuts = [0, 8, BundleFormat.headerBytes, BundleFormat.headerBytes + 4, made.bytes.count - 1, made.bytes.count - 17]
        for _ in 0..<30 { cuts.append(rng.next(made.bytes.count)) }
        for cut in cuts {
            // A cut header is no bundle; a cut anywhere after it is a bundle cut short.
            let expected = cut < BundleFormat.headerBytes ? "not a healthvault bundle" : "it ends before its final chunk (the file is truncated)"
            let message = made.attempt(Array(made.bytes[..<cut])) ?? "accepted"
            #expect(message.contains(expected), "cut at \(cut): \(message)")
        }
        // Appended bytes after the final chunk are refused too.
        #expect(made.attempt(made.bytes + [0, 0, 0, 0])?.contains("data follows its final chunk") == true)
    }

    @Test func aMissingFinalChunkIsAnError() throws {
        // Enough data for several 1 MiB chunks, then the last chunk cut away exactly.
        let made = try Made(days: 30)
        var offset = BundleFormat.headerBytes
        var chunkStarts: [Int] = []
        while offset < made.bytes.count {
            chunkStarts.append(offset)
            let n = Int(made.bytes[offset]) | Int(made.bytes[offset + 1]) << 8 | Int(made.bytes[offset + 2]) << 16 | Int(made.bytes[offset + 3]) << 24
            offset += 4 + n
        }
        #expect(offset == made.bytes.count && chunkStarts.count >= 2)
        let message = made.attempt(Array(made.bytes[..<chunkStarts.last!]))
        #expect(message?.contains("truncated") == true, "\(message ?? "accepted")")
    }

    @Test func anotherRecipientsKeyOrAnUnexpectedSenderIsRefused() throws {
        let made = try Made()
        let other = made.dir.path + "/other"
        try RecipientKeyFiles.generate(prefix: other)
        #expect(made.attempt(made.bytes, key: other)?.contains("not addressed to this key") == true)
        let wrongSender = "0000-0000-0000-0000-0000-0000-0000-0000"
        #expect(made.attempt(made.bytes, expect: wrongSender)?.contains("not the expected sender") == true)
        #expect(throws: BundleError.invalidKeyFile(path: other + ".pub", reason: "not a healthvault secret key (written by `vaultctl keygen`)")) {
            try RecipientKeyFiles.readSecretKey(other + ".pub")
        }
    }

    @Test func exportRefusesWithoutConsentAndAfterRevocationOrExpiry() throws {
        let made = try Made()
        let vault = try Vault.open(at: made.dir.path + "/vault", passphrase: passphrase("p"), mode: .readWrite)
        try vault.revoke(recipient: "Sleep Laboratory", categories: [.activity])
        let partial = try vault.export(to: "Sleep Laboratory", path: made.dir.path + "/partial.bundle")
        #expect(Set(partial.counts.keys) == ["heart"])
        try vault.revoke(recipient: "Sleep Laboratory", categories: nil)
        #expect(throws: VaultError.noConsentInForce(recipient: "Sleep Laboratory")) { try vault.export(to: "Sleep Laboratory", path: made.dir.path + "/none.bundle") }
        #expect(!FileManager.default.fileExists(atPath: made.dir.path + "/none.bundle"))
        try vault.grant(recipient: "Sleep Laboratory", categories: [.sleep], from: nil, to: nil, granularity: .raw,
                        expires: LocalDay(year: 2025, month: 1, day: 1), purpose: nil, now: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(throws: VaultError.noConsentInForce(recipient: "Sleep Laboratory")) {
            try vault.export(to: "Sleep Laboratory", path: made.dir.path + "/expired.bundle", today: LocalDay(year: 2025, month: 1, day: 2))
        }
        _ = try vault.export(to: "Sleep Laboratory", path: made.dir.path + "/sleep.bundle", today: LocalDay(year: 2025, month: 1, day: 1))
        #expect(throws: VaultError.unknownRecipient(name: "nobody")) { try vault.export(to: "nobody", path: made.dir.path + "/x.bundle") }
        // No health value or name in the vault directory after all this.
        for name in try FileManager.default.contentsOfDirectory(atPath: made.dir.path + "/vault") {
            let data = try Data(contentsOf: URL(fileURLWithPath: made.dir.path + "/vault/" + name))
            for needle in ["Sleep Laboratory", "HKQuantity", "activity", "Alex’s"] where name != "events.lock" {
                #expect(data.range(of: Data(needle.utf8)) == nil, "\(name) holds \(needle)")
            }
        }
    }

    @Test func theReceiptNamesOnlyWhatIsStillInForceAndATrailingSlashIsOneDirectory() throws {
        let made = try Made()
        let vault = try Vault.open(at: made.dir.path + "/vault", passphrase: passphrase("p"), mode: .readWrite)
        try vault.revoke(recipient: "Sleep Laboratory", categories: [.heart])
        let bundle = made.dir.path + "/after-revoke.bundle"
        _ = try vault.export(to: "Sleep Laboratory", path: bundle)
        let out = made.dir.path + "/opened/"
        _ = try BundleReader.open(bundle, keyFile: made.key + ".key", outputDirectory: out)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "manifest.json"))) as! [String: Any]
        let receipts = manifest["consents"] as! [[String: Any]]
        let classes = receipts.flatMap { (($0["provision"] as! [String: Any])["class"] as! [[String: Any]]).map { $0["code"] as! String } }
        #expect(classes == ["activity"])
        // Opening again into the same, now non-empty, directory is refused and keeps what is there.
        #expect(throws: BundleError.fileExists(path: made.dir.path + "/opened")) {
            try BundleReader.open(bundle, keyFile: made.key + ".key", outputDirectory: out)
        }
        #expect(FileManager.default.fileExists(atPath: out + "manifest.json"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: made.dir.path).filter { $0.contains(".tmp.") }.isEmpty)
    }
}

/// The streaming reader's entry splitter gives the same entries whatever the chunking.
@Suite struct BundleEntryStreamTests {
    static func split(_ plaintext: [UInt8], pieces: [Int]) throws -> [(String, [UInt8])] {
        var stream = BundleEntryStream()
        var entries: [(String, [UInt8])] = []
        var offset = 0, k = 0
        while offset < plaintext.count {
            let n = min(pieces[k % pieces.count], plaintext.count - offset)
            stream.feed(plaintext[offset..<offset + n]) { event in
                switch event {
                case .begin(let name, _): entries.append((name, []))
                case .bytes(let bytes): entries[entries.count - 1].1 += bytes
                case .end: break
                }
            }
            offset += n
            k += 1
        }
        #expect(stream.isAtEntryBoundary)
        return entries
    }

    @Test func entriesAreTheSameWhateverTheChunkBoundaries() throws {
        let entries: [(String, [UInt8])] = [("manifest.json", Array("{}".utf8)), ("manifest.sig", [UInt8](repeating: 7, count: 64)),
                                            ("data/empty.ndjson", []), ("data/a.ndjson", (0..<5000).map { UInt8($0 % 251) })]
        let plaintext = entries.flatMap { BundleFormat.entry(name: $0.0, bytes: $0.1) }
        for pieces in [[plaintext.count], [1], [2, 3], [7, 1, 4096], [17]] {
            let split = try Self.split(plaintext, pieces: pieces)
            #expect(split.map(\.0) == entries.map(\.0) && split.map(\.1) == entries.map(\.1), "pieces \(pieces)")
        }
        var cut = BundleEntryStream()
        cut.feed(plaintext.prefix(plaintext.count - 1)) { _ in }
        #expect(!cut.isAtEntryBoundary)
    }

    @Test func aBundleRefusedInItsLastChunkLeavesNoStagingFolder() throws {
        // Several 1 MiB chunks: the data files were being written when the damage was met.
        let made = try BundleTamperTests.Made(days: 30)
        var tampered = made.bytes
        tampered[tampered.count - 5] ^= 1
        let message = made.attempt(tampered) ?? "accepted"
        #expect(message.contains("fails authentication"), "\(message)")
        let left = try FileManager.default.contentsOfDirectory(atPath: made.dir.path).filter { $0.hasPrefix("attempt-out") }
        #expect(left.isEmpty, "\(left)")
    }
}

/// Bundles signed by whoever made them, with manifests no vault writes (review findings).
@Suite struct ForgedManifestTests {
    /// A bundle to `keyPrefix` whose manifest lists `files` (JSON objects) over `data` entries,
    /// signed by a fresh key.
    static func forge(files: String, data: [(String, [UInt8])], to keyPrefix: String, at path: String) throws {
        let signing = SigningKeyPair.generate(), encryption = BoxKeyPair.generate()
        let recipient = try RecipientKeyFiles.readPublicKey(keyPrefix + ".pub")
        let manifest = """
            {"format":"healthvault-bundle","version":2,"createdAt":"2026-11-23T12:00:00Z",
             "sender":{"fingerprint":"\(Fingerprint.of(signingKey: signing.publicKey, encryptionKey: encryption.publicKey))",
                       "signingKey":"\(Data(signing.publicKey).base64EncodedString())","encryptionKey":"\(Data(encryption.publicKey).base64EncodedString())"},
             "recipient":{"name":"lab","publicKey":"\(Data(recipient).base64EncodedString())"},
             "logPosition":{"chainHash":"00"},"consents":[],"counts":{},"files":[\(files)]}
            """
        let bytes = Array(manifest.utf8)
        var entries = [BundleFormat.entry(name: "manifest.json", bytes: bytes), BundleFormat.entry(name: "manifest.sig", bytes: signing.sign(bytes))]
        for (name, content) in data { entries.append(BundleFormat.entry(name: name, bytes: content)) }
        _ = try BundleWriter.write(entries, recipientKey: recipient, to: path, fileSystem: POSIXFileSystem())
    }

    static func file(_ path: String, _ bytes: [UInt8], size: Int? = nil) -> String {
        #"{"path":"\#(path)","category":"activity","granularity":"raw","format":"ndjson","lines":1,"bytes":\#(size ?? bytes.count),"blake2b":"\#(Digest.of(bytes).hex)"}"#
    }

    @Test func aNegativeSizeOrAnUnsafePathIsRefusedBeforeAnythingIsWritten() throws {
        let dir = TemporaryDirectory("forged")
        let key = dir.path + "/lab"
        _ = try RecipientKeyFiles.generate(prefix: key)
        let good = Array("{\"a\":1}\n".utf8)
        for (name, files) in [("negative", Self.file("data/a.ndjson", good) + "," + Self.file("data/b.ndjson", good, size: -1)),
                              ("unsafe", Self.file("data/a.ndjson", good) + "," + Self.file("data/../../b.ndjson", good)),
                              ("twice", Self.file("data/a.ndjson", good) + "," + Self.file("data/a.ndjson", good))] {
            let bundle = dir.path + "/\(name).bundle"
            try Self.forge(files: files, data: [("data/a.ndjson", good), ("data/b.ndjson", good)], to: key, at: bundle)
            #expect {
                try BundleReader.open(bundle, keyFile: key + ".key", outputDirectory: dir.path + "/out-\(name)")
            } throws: { error in
                "\(error)".contains("its files do not match the manifest")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("out-") }
            #expect(left.isEmpty, "\(name): \(left)")
        }
    }

    @Test func aStagingFolderLeftByAKilledOpenIsRemovedByTheNextOpen() throws {
        let dir = TemporaryDirectory("stale")
        let key = dir.path + "/lab"
        _ = try RecipientKeyFiles.generate(prefix: key)
        let good = Array("{\"a\":1}\n".utf8)
        let bundle = dir.path + "/ok.bundle"
        try Self.forge(files: Self.file("data/a.ndjson", good), data: [("data/a.ndjson", good)], to: key, at: bundle)
        let stale = dir.path + "/out.tmp.0123456789abcdef"
        try FileManager.default.createDirectory(atPath: stale + "/data", withIntermediateDirectories: true)
        try Data(good).write(to: URL(fileURLWithPath: stale + "/data/a.ndjson"))
        let opened = try BundleReader.open(bundle, keyFile: key + ".key", outputDirectory: dir.path + "/out")
        #expect(opened.files == ["manifest.json", "data/a.ndjson"])
        #expect(!FileManager.default.fileExists(atPath: stale))
    }
}
