import EventLog
import Foundation
@testable import HealthModel
import ResearchBundle
import Testing
@testable import Vault
import VaultTestSupport

/// An export is a plan (issue 38): the granted categories' keys are the only data frames it
/// decrypts, and every line it writes reads back, through the researcher's reader, as the same line.
@Suite(.serialized) struct ExportPlanTests {
    /// A vault holding a real export (comocomo's iPhone, iOS 10: samples with metadata and
    /// sources, the `Me` characteristics, correlations) and a recipient with a key.
    final class World {
        let t: ImportTestVault
        let key: String

        init() throws {
            t = try ImportTestVault()
            _ = try t.vault.importFiles([Fixtures.path("comocomo/export.zip")])
            key = t.dir.path + "/lab"
            try RecipientKeyFiles.generate(prefix: key)
            try t.vault.addRecipient(name: "lab", publicKeyFile: key + ".pub")
        }

        /// Exports to `lab` under a grant of `categories` at `granularity`; returns the opened
        /// data files' NDJSON by category.
        func export(_ categories: [HealthCategory], _ granularity: Granularity, name: String,
                    from: LocalDay? = nil, to: LocalDay? = nil) throws -> [String: [UInt8]] {
            _ = try t.vault.grant(recipient: "lab", categories: categories, from: from, to: to, granularity: granularity, expires: nil, purpose: nil)
            let bundle = t.dir.path + "/\(name).bundle", out = t.dir.path + "/\(name)"
            _ = try t.vault.export(to: "lab", path: bundle)
            _ = try BundleReader.open(bundle, keyFile: key + ".key", outputDirectory: out, expectSender: nil)
            var files: [String: [UInt8]] = [:]
            for category in categories {
                files[category.rawValue] = Array(try Data(contentsOf: URL(fileURLWithPath: out + "/data/\(category.rawValue).ndjson")))
            }
            return files
        }
    }

    @Test func everyLineOfRealBundlesReadsBackAsTheLineItWas() throws {
        let world = try World()
        let categories: [HealthCategory] = [.activity, .heart, .body, .vitals, .profile, .nutrition, .other]
        var read = 0
        for granularity in [Granularity.raw, .hourly, .daily] {
            let files = try world.export(categories, granularity, name: granularity.rawValue)
            let reader = BundleLineReader()
            var writer = BundleLineWriter(format: .ndjson, figures: granularity != .raw)
            for category in categories {
                let bytes = try #require(files[category.rawValue])
                for line in bytes.split(separator: 0x0A) {
                    let decoded = try Array(line).withUnsafeBufferPointer { try reader.read($0) }
                    switch (granularity, decoded) {
                    case (.raw, .record), (.hourly, .figure), (.daily, .figure): break
                    default: Issue.record("a \(granularity) file held \(decoded)")
                    }
                    #expect(decoded.category == category.rawValue)
                    writer.append(decoded)
                    read += 1
                }
                #expect(writer.take() == bytes, "\(granularity) \(category): the lines written again differ from the bundle's")
            }
        }
        // comocomo's phone counted steps, distances, flights, body and vitals: thousands of lines.
        #expect(read > 10_000)
    }

    /// The grant names `heart` only; a byte of every other category's frames is changed, as
    /// damage or an attacker would. The export still succeeds, holding the heart samples it held
    /// before the damage: it never read the other frames. `verify` still names the damage.
    @Test func anExportDecryptsOnlyTheGrantedCategoriesFrames() throws {
        let world = try World()
        let before = try world.export([.heart], .raw, name: "intact")
        let heartLines = before["heart"]!.split(separator: 0x0A).count
        #expect(heartLines > 100)
        let vault = world.t.vault
        let heart = vault.liveKeys(of: [.heart])
        let frames = try vault.tables.frames()
        let damaged = frames.indices.filter { frames[$0].keyID != EventLog.auditKeyID && !heart.contains(frames[$0].keyID) }
        #expect(damaged.count > 5)
        let log = try FileHandle(forUpdating: URL(fileURLWithPath: world.t.path + "/events.log"))
        for i in damaged {
            // The frame's last byte (its tag): authentication fails for whoever decrypts it.
            let end = i + 1 < frames.count ? frames[i + 1].offset : vault.committed.offset
            try log.seek(toOffset: end - 1)
            let byte = try #require(try log.read(upToCount: 1)).first!
            try log.seek(toOffset: end - 1)
            try log.write(contentsOf: Data([byte ^ 0x01]))
        }
        try log.close()
        let after = try world.export([.heart], .raw, name: "damaged")
        #expect(after["heart"]!.split(separator: 0x0A).count == heartLines)
        #expect(throws: (any Error).self) { try world.export([.activity], .raw, name: "activity") }
        #expect(try !Vault.verify(at: world.t.path, passphrase: passphrase("p")).isOK)
    }

    @Test func thePlanReadsTheGrantedCategoriesKeysUpToTheGrantsLastMonth() throws {
        let world = try World()
        let vault = world.t.vault
        func grant(_ category: HealthCategory, _ granularity: Granularity, to: LocalDay? = nil) -> ConsentGrant {
            ConsentGrant(id: "g", at: Date(), recipient: "lab", categories: [category], from: nil, to: to, granularity: granularity,
                         expires: nil, purpose: nil)
        }
        func labels(_ plan: ExportPlan) -> [String] {
            vault.log.dataKeys.filter { plan.keys.contains($0.id) }.map { String(decoding: $0.label, as: UTF8.self) }.sorted()
        }
        let activityMonths = vault.log.dataKeys.map { String(decoding: $0.label, as: UTF8.self) }.filter { $0.hasPrefix("activity/") }.sorted()
        #expect(activityMonths.count > 3)
        let raw = ExportPlan(grants: [.activity: grant(.activity, .raw)], trackerCategories: [], dataKeys: vault.log.dataKeys, erased: [], since: nil)
        #expect(labels(raw) == activityMonths)
        // Daily figures come from the read models: no frame is read.
        let daily = ExportPlan(grants: [.activity: grant(.activity, .daily)], trackerCategories: [], dataKeys: vault.log.dataKeys, erased: [], since: nil)
        #expect(daily.keys.isEmpty)
        // A daily grant of a tracker's category reads its keys: a tracker's figure is its day's last entry.
        let tracked = ExportPlan(grants: [.activity: grant(.activity, .daily)], trackerCategories: [.activity], dataKeys: vault.log.dataKeys, erased: [],
                                 since: nil)
        #expect(labels(tracked) == activityMonths)
        // Months after the period's last are not read; earlier ones are (a sample may reach into it).
        let secondMonth = try #require(LocalMonth(parsing: String(activityMonths[1].dropFirst("activity/".count))))
        let bounded = ExportPlan(grants: [.activity: grant(.activity, .raw, to: secondMonth.days.lowerBound)], trackerCategories: [],
                                 dataKeys: vault.log.dataKeys, erased: [], since: nil)
        #expect(labels(bounded) == Array(activityMonths.prefix(2)))
    }
}
