import Foundation
import HealthModel
import Projections
import Testing
import VaultEvents
import VaultTestSupport
@testable import Vault

/// A rebuild reads samples by their heads (`EventDecoder.sampleHead`), not whole: the two
/// readers must agree on every sample, and refuse the same damage.
@Suite struct SampleHeadTests {
    /// Vaults with legacy identities, iOS 8's numbered categories stored as numbers, and real
    /// exports with metadata, beats and creation dates.
    static func vaults(in dir: TemporaryDirectory) throws -> [(name: String, vault: Vault, keep: ImportTestVault?)] {
        var vaults: [(String, Vault, ImportTestVault?)] = []
        for name in ["vault-format2", "vault-ios8-numbers"] {
            vaults.append((name, try FixtureVaults.open(name, in: dir), nil))
        }
        let t = try ImportTestVault()
        _ = try t.vault.importFiles(["opendroid/sampleexport.xml", "opendroid/sampleexport-2.xml", "y-yu/export.xml", "tdda/export6s3sample.xml"].map(Fixtures.path))
        vaults.append(("real exports", t.vault, t))
        return vaults
    }

    @Test func aSamplesHeadGivesTheInputOfTheWholeSample() throws {
        let dir = TemporaryDirectory("sample-heads")
        for (name, vault, _) in try Self.vaults(in: dir) {
            var headFeed = ProjectionFeed(), wholeFeed = ProjectionFeed()
            var heads = 0, withMetadata = 0, withBeats = 0, others = 0
            _ = try vault.scanLog { decoder, index, bytes in
                guard let head = try decoder.sampleHead(bytes, index: index) else {
                    if let event = try decoder.decode(bytes, index: index) {
                        others += 1
                        if case .sample = event { Issue.record("\(name): a sample without a head") }
                    }
                    return
                }
                heads += 1
                guard case .sample(let sample)? = try decoder.decode(bytes, index: index) else {
                    Issue.record("\(name): a head of something other than a sample")
                    return
                }
                if !sample.metadata.isEmpty { withMetadata += 1 }
                if !sample.beats.isEmpty { withBeats += 1 }
                #expect(head.type == sample.type && decoder.sources[head.sourceID] == sample.source && head.start == sample.start
                        && head.end == sample.end && String(describing: head.value) == String(describing: sample.value), "\(name) event \(index)")
                let fromHead = headFeed.input(for: head, of: decoder), fromWhole = wholeFeed.input(for: .sample(sample))
                #expect(String(describing: fromHead) == String(describing: fromWhole), "\(name) event \(index)")
            }
            #expect(heads > 0 && others > 0, "\(name)")
            if name == "real exports" { #expect(withMetadata > 0 && withBeats > 0) }
        }
    }

    /// Every cut of a sample's bytes, a byte changed anywhere after its kind, a field of a newer
    /// build and a byte too many: `sampleHead` throws exactly when `decode` does.
    @Test func damageIsRefusedByBothReaders() throws {
        let dir = TemporaryDirectory("sample-head-damage")
        let (_, vault, keep) = try Self.vaults(in: dir)[2]
        _ = keep
        var checked = 0, refused = 0
        _ = try vault.scanLog { decoder, index, bytes in
            guard bytes.count > 2, bytes[1] == UInt8(EventCoding.Kind.sample.rawValue), checked < 40 else {
                _ = try decoder.decode(bytes, index: index)
                return
            }
            let original = Array(bytes)
            var variants: [[UInt8]] = (2..<original.count).map { Array(original[..<$0]) }
            for i in 2..<original.count {
                for flip: UInt8 in [0x01, 0x40, 0x80] {
                    var changed = original
                    changed[i] ^= flip
                    variants.append(changed)
                }
            }
            variants.append(original + [0])
            for variant in variants {
                let head = variant.withUnsafeBytes { b in Result { try decoder.sampleHead(b, index: index) } }
                let whole = variant.withUnsafeBytes { b in Result { try decoder.decode(b, index: index) } }
                switch (head, whole) {
                case (.failure, .failure): refused += 1
                case (.success(let h?), .success(.sample(let s)?)):
                    #expect(h.type == s.type && decoder.sources[h.sourceID] == s.source && h.start == s.start && h.end == s.end
                            && String(describing: h.value) == String(describing: s.value), "\(h.value) \(s.value)")
                default:
                    Issue.record("event \(index): the readers disagree on \(variant)")
                }
            }
            checked += 1
        }
        #expect(checked == 40 && refused > 40)
    }
}
