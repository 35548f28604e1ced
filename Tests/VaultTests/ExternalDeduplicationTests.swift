import EventLog
import Foundation
@testable import HealthModel
import SyntheticHealth
import Testing
import VaultTestSupport
@testable import Vault

/// Imports too large for the in-memory identity table deduplicate through sealed scratch files;
/// they must give exactly what the in-memory path gives.
@Suite struct ExternalDeduplicationTests {
    @Test func theMergeKeepsExactlyTheFirstOfEachNewIdentity() throws {
        let dir = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        let existing = (0..<3000).map { _ in UInt64.random(in: 1...5000, using: &generator) }
        let dedup = try ExternalDeduplicator(directory: dir.path, existing: Array(Set(existing.prefix(1000))).sorted(), runLength: 97)
        for h in existing.dropFirst(1000) { try dedup.addExisting(hash: h) }
        var known = Set(existing)
        var expected: [(UInt32, [UInt8])] = []
        var expectedDuplicates = 0
        for i in 0..<4000 {
            let h = UInt64.random(in: 1...9000, using: &generator)
            let nested = i % 13 == 0
            let bytes = withUnsafeBytes(of: UInt64(i)) { Array($0) }
            // Each event keeps the key it was set aside with.
            let keyID = UInt32(2 + i % 5)
            try dedup.add(hash: h, nested: nested, keyID: keyID, bytes: bytes)
            if known.insert(h).inserted { expected.append((keyID, bytes)) } else if !nested { expectedDuplicates += 1 }
        }
        var appended: [(UInt32, [UInt8])] = []
        let (added, duplicates) = try dedup.resolve { appended.append(($0, $1)) }
        #expect(appended.map(\.0) == expected.map(\.0) && appended.map(\.1) == expected.map(\.1))
        #expect(added == expected.count && duplicates == expectedDuplicates)
        // What was added now counts as existing for the next file.
        try dedup.add(hash: known.first!, nested: false, keyID: 2, bytes: [1])
        var again: [[UInt8]] = []
        #expect(try dedup.resolve { again.append($1) } == (0, 1))
    }

    private func importAll(_ files: [String], budget: Int?) throws -> (reports: [ImportReport], events: [VaultEvent], external: Bool) {
        let t = try ImportTestVault()
        if let budget { t.vault.importIdentityBudgetSlots = budget }
        var reports: [ImportReport] = []
        for f in files { reports.append(try t.vault.importFiles([f])) }
        return (reports, try t.dataEvents(), budget != nil)
    }

    @Test func importsThroughScratchFilesEqualImportsInMemory() throws {
        let dir = TemporaryDirectory()
        let zip = dir.path + "/export.zip"
        let small = dir.path + "/small.zip"
        _ = try SyntheticExport.writeZip(to: zip, options: .init(days: 4, firstDay: (2024, 3, 29)))
        _ = try SyntheticExport.writeZip(to: small, options: .init(days: 2, firstDay: (2024, 3, 29)))
        let files = [small, Fixtures.path("dogsheep/export.xml"), zip, zip, Fixtures.path("jshrake/export.zip")]
        let inMemory = try importAll(files, budget: nil)
        let external = try importAll(files, budget: 1024)
        #expect(external.reports.map { [$0.added, $0.duplicates, $0.rejected] } == inMemory.reports.map { [$0.added, $0.duplicates, $0.rejected] })
        #expect(external.events == inMemory.events)
        // The overlap is real: the two-day export is inside the four-day one.
        #expect(inMemory.reports[2].duplicates > 0 && inMemory.reports[3].added == 0)
    }

    @Test func aVaultLargerThanTheBudgetStillDeduplicatesExactly() throws {
        let t = try ImportTestVault()
        let dir = TemporaryDirectory()
        let zip = dir.path + "/export.zip"
        let summary = try SyntheticExport.writeZip(to: zip, options: .init(days: 3))
        let first = try t.vault.importFiles([zip])
        t.vault.importIdentityBudgetSlots = 1024
        let again = try t.vault.importFiles([zip, zip])
        #expect(first.added == summary.records + summary.routeFiles)
        #expect(again.added == 0 && again.files.map(\.duplicates) == [first.added, first.added])
        #expect(try Vault.verify(at: t.path, passphrase: passphrase("p")).isOK)
    }
}
