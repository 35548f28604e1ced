import EventLog
import Foundation
@testable import HealthModel
import SyntheticHealth
import TestSupport
import Testing
import VaultTestSupport
@testable import Vault

/// Imports too large for the in-memory identity table deduplicate through sealed scratch files;
/// they must give exactly what the in-memory path gives.
@Suite struct ExternalDeduplicationTests {
    /// The rule in its plainest form: each copy the vault holds matches one record of a file;
    /// a nested record is the same as any record of the file that used its copy.
    private struct MultisetModel {
        enum Use { case unused, topLevel, nested }
        var copies: [UInt64: [Use]] = [:]

        mutating func top(_ h: UInt64, legacy: UInt64?) -> IdentitySet.Outcome {
            for key in [h] + (legacy.map { [$0] } ?? []) {
                if let i = copies[key, default: []].firstIndex(where: { $0 != .topLevel }) {
                    let was = copies[key]![i]
                    copies[key]![i] = .topLevel
                    return was == .unused ? .duplicate : .copy
                }
            }
            copies[h, default: []].append(.topLevel)
            return .added
        }

        mutating func nested(_ h: UInt64) -> IdentitySet.Outcome {
            if let first = copies[h]?.first {
                if first == .unused { copies[h]![0] = .nested; return .duplicate }
                return .copy
            }
            copies[h] = [.nested]
            return .added
        }

        mutating func endFile() { copies = copies.mapValues { $0.map { _ in .unused } } }
    }

    /// Random files over a small range of identities, so that copies repeat in the vault and in
    /// files; nested records come after their top-level copies, as in Apple's exports.
    private func randomFile(_ count: Int, legacy: Bool, using generator: inout some RandomNumberGenerator) -> [(hash: UInt64, legacy: UInt64?, nested: Bool)] {
        // A record's legacy identity is a function of its whole one, shared by several.
        var file = (0..<count).map { _ in
            let hash = UInt64.random(in: 1...300, using: &generator)
            return (hash: hash, legacy: legacy ? 1001 + hash % 100 : nil, nested: !legacy && Int.random(in: 0..<8, using: &generator) == 0)
        }
        for i in file.indices where file[i].nested && file[(i + 1)...].contains(where: { $0.hash == file[i].hash && !$0.nested }) {
            file[i].nested = false
        }
        return file
    }

    @Test(arguments: [false, true]) func memoryAndScratchFilesFollowTheMultisetRule(legacy: Bool) throws {
        let seed = TestSeed()
        var generator = seed.generator
        for _ in 0..<10 {
            let dir = TemporaryDirectory()
            var model = MultisetModel()
            var table = IdentitySet()
            let existing = (0..<200).map { i in legacy && i % 2 == 0 ? UInt64.random(in: 1001...1100, using: &generator) : UInt64.random(in: 1...300, using: &generator) }
            for h in existing {
                model.copies[h, default: []].append(.unused)
                table.addExisting(hash: h)
            }
            let dedup = try ExternalDeduplicator(directory: dir.path, existing: Array(existing.prefix(50)).sorted(), runLength: 97)
            for h in existing.dropFirst(50) { try dedup.addExisting(hash: h) }
            let file = randomFile(400, legacy: legacy, using: &generator)
            // The same file twice: the second time adds nothing.
            for pass in 0..<2 {
                var expected: [(UInt32, [UInt8])] = []
                var counts = (duplicates: 0, repeats: 0)
                for (i, record) in file.enumerated() {
                    let outcome = record.nested ? model.nested(record.hash) : model.top(record.hash, legacy: record.legacy)
                    let inMemory = record.nested ? table.matchNested(record.hash, legacy: record.legacy) : table.matchTopLevel(record.hash, legacy: record.legacy)
                    #expect(inMemory == outcome, "record \(i), pass \(pass), \(seed)")
                    let bytes = withUnsafeBytes(of: UInt64(i)) { Array($0) }
                    switch outcome {
                    case .added: expected.append((UInt32(2 + i % 5), bytes))
                    case .duplicate: counts.duplicates += 1
                    case .copy: counts.repeats += 1
                    }
                    try dedup.add(hash: record.hash, legacyHash: record.legacy, nested: record.nested, keyID: UInt32(2 + i % 5), bytes: bytes)
                }
                model.endFile()
                table.endFile()
                var appended: [(UInt32, [UInt8])] = []
                // The second file is the last: what it adds is not kept, and decides the same.
                let result = try dedup.resolve(keepingAdded: pass == 0) { appended.append(($0, $1)) }
                // In file order, each with the key it was set aside with.
                #expect(appended.map(\.1) == expected.map(\.1) && appended.map(\.0) == expected.map(\.0), "pass \(pass)")
                #expect(result == [.init(added: expected.count, duplicates: counts.duplicates, repeats: counts.repeats)])
                if pass == 1 { #expect(expected.isEmpty) }
            }
        }
    }

    /// Many files decided in one resolve (a device folder) give what one resolve per file gives:
    /// each file matches the vault's copies and what the files before it added. Only the last
    /// file carries legacy hashes, as the session guarantees (it resolves at every file's end
    /// once the vault shows legacy identities).
    @Test(arguments: [false, true]) func filesDecidedTogetherFollowTheRuleFileByFile(legacy: Bool) throws {
        let seed = TestSeed()
        var generator = seed.generator
        for round in 0..<10 {
            let dir = TemporaryDirectory()
            var model = MultisetModel()
            let existing = (0..<150).map { i in legacy && i % 2 == 0 ? UInt64.random(in: 1001...1100, using: &generator) : UInt64.random(in: 1...300, using: &generator) }
            for h in existing { model.copies[h, default: []].append(.unused) }
            let dedup = try ExternalDeduplicator(directory: dir.path, existing: existing.sorted(), runLength: 61)
            let fileCount = Int.random(in: 2...6, using: &generator)
            var expected: [[UInt8]] = []
            var counts: [ExternalDeduplicator.FileCounts] = []
            var sequence = 0
            for f in 0..<fileCount {
                // An empty file now and then, as a device folder's unreadable one.
                let size = Int.random(in: 0..<8, using: &generator) == 0 ? 0 : Int.random(in: 1...250, using: &generator)
                var file = randomFile(size, legacy: legacy, using: &generator)
                if f < fileCount - 1 { for i in file.indices { file[i].legacy = nil } }
                var count = ExternalDeduplicator.FileCounts()
                for record in file {
                    let bytes = withUnsafeBytes(of: UInt64(sequence)) { Array($0) }
                    sequence += 1
                    switch record.nested ? model.nested(record.hash) : model.top(record.hash, legacy: record.legacy) {
                    case .added:
                        expected.append(bytes)
                        count.added += 1
                    case .duplicate: count.duplicates += 1
                    case .copy: count.repeats += 1
                    }
                    try dedup.add(hash: record.hash, legacyHash: record.legacy, nested: record.nested, keyID: 2, bytes: bytes)
                }
                model.endFile()
                counts.append(count)
                if f < fileCount - 1 { dedup.endFile() }
            }
            var appended: [[UInt8]] = []
            let result = try dedup.resolve { appended.append($1) }
            // By sequence, which keeps a failure's message short.
            func sequences(_ records: [[UInt8]]) -> [UInt64] { records.map { $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } } }
            #expect(sequences(appended) == sequences(expected), "round \(round), \(seed)")
            #expect(result == counts, "round \(round), \(seed)")
        }
    }

    @Test func identitiesMovedOutOfMemoryInTheMiddleOfAFileKeepWhatTheFileUsed() throws {
        let dir = TemporaryDirectory()
        var table = IdentitySet()
        for h: UInt64 in [7, 7, 9] { table.addExisting(hash: h) }
        // Decided in memory: one copy of 7 used, 11 added, 9 untouched.
        #expect(table.matchTopLevel(7, legacy: nil) == .duplicate)
        #expect(table.matchTopLevel(11, legacy: nil) == .added)
        let dedup = try ExternalDeduplicator(directory: dir.path, existing: table.sortedHashes(), inUse: table.copiesInUse(), runLength: 3)
        // The rest of the file: 7 has one copy left, 11 none (this file made it), 9 one.
        for (i, h) in ([7, 7, 11, 9, 9] as [UInt64]).enumerated() {
            try dedup.add(hash: h, legacyHash: nil, nested: false, keyID: 2, bytes: [UInt8(i)])
        }
        var appended: [[UInt8]] = []
        let result = try dedup.resolve { appended.append($1) }
        #expect(appended == [[1], [2], [4]])
        #expect(result == [.init(added: 3, duplicates: 2, repeats: 0)])
    }

    /// A legacy copy used in memory stays used after the move (the second identical record is new),
    /// and a copy a nested record took in memory makes its top-level record a repeat.
    @Test func legacyAndNestedCopiesUsedInMemorySurviveTheMove() throws {
        let dir = TemporaryDirectory()
        var table = IdentitySet()
        table.addExisting(hash: 900)  // a legacy copy
        #expect(table.matchTopLevel(5, legacy: 900) == .duplicate)
        #expect(table.matchNested(6, legacy: nil) == .added)
        let dedup = try ExternalDeduplicator(directory: dir.path, existing: table.sortedHashes(), inUse: table.copiesInUse(), runLength: 3)
        try dedup.add(hash: 5, legacyHash: 900, nested: false, keyID: 2, bytes: [1])
        try dedup.add(hash: 6, legacyHash: nil, nested: false, keyID: 2, bytes: [2])
        var appended: [[UInt8]] = []
        let result = try dedup.resolve { appended.append($1) }
        #expect(appended == [[1]])
        #expect(result == [.init(added: 1, duplicates: 0, repeats: 1)])
    }

    /// Copies of one key keep their order when the table grows, even when they wrap round its end.
    @Test func copiesKeepTheirOrderWhenTheTableGrows() {
        var table = IdentitySet()
        let wrapping: UInt64 = 1023 + 1024 * 7  // home slot 1023, the last of 1024
        table.addExisting(hash: wrapping)
        table.addExisting(hash: wrapping)  // wraps to slot 0
        #expect(table.matchTopLevel(wrapping, legacy: nil) == .duplicate)
        for k: UInt64 in 1...2000 { table.addExisting(hash: k * 2_048 + 5) }
        // The nested copy of that record meets the copy it used first: a repeat, not a duplicate.
        #expect(table.matchNested(wrapping, legacy: nil) == .copy)
    }

    /// A copy of a table is a table of its own: a change to one leaves the other as it was, past a
    /// growth of its memory (a table of 2 MiB pages) too.
    @Test func aCopyOfATableChangesApart() {
        var table = IdentitySet()
        table.addExisting(hash: 41)
        var copy = table
        #expect(copy.matchTopLevel(41, legacy: nil) == .duplicate)
        #expect(copy.matchTopLevel(42, legacy: nil) == .added)
        for k: UInt64 in 1...300_000 { copy.addExisting(hash: k * 8 + 3) }
        #expect(copy.capacity == 524_288 && table.capacity == 1_024)
        #expect(table.matchTopLevel(42, legacy: nil) == .added)
        #expect(table.matchTopLevel(41, legacy: nil) == .duplicate)
        #expect(table.sortedHashes() == [41, 42])
        #expect(copy.matchTopLevel(299_999 * 8 + 3, legacy: nil) == .duplicate)
        #expect(copy.count == 300_002 && table.count == 2)
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
        #expect(external.reports.map { [$0.added, $0.duplicates, $0.rejected, $0.files[0].repeats] } == inMemory.reports.map { [$0.added, $0.duplicates, $0.rejected, $0.files[0].repeats] })
        #expect(external.events == inMemory.events)
        // The overlap is real: the two-day export is inside the four-day one.
        #expect(inMemory.reports[2].duplicates > 0 && inMemory.reports[3].added == 0)
    }

    /// One command of many files (a device folder) adds a run of what each file added; past eight
    /// they are merged into one. Fourteen FIT files, two of them copies of earlier ones, through
    /// scratch files give what they give in memory.
    @Test func manyFilesInOneCommandMergeTheirRunsAndStayExact() throws {
        let dir = TemporaryDirectory()
        var files: [String] = []
        for i in 0..<14 {
            let path = dir.path + "/\(i).fit"
            let seed = i == 9 ? 3 : i == 12 ? 5 : i
            try Data(SyntheticFIT.activity(start: 1_717_228_800 + Int64(seed) * 86_400, seconds: 120, utcOffset: 3_600, seed: UInt64(seed + 1)))
                .write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        func run(budget: Int?) throws -> (report: ImportReport, events: [VaultEvent]) {
            let t = try ImportTestVault()
            if let budget { t.vault.importIdentityBudgetSlots = budget }
            let report = try t.vault.importFiles(files)
            return (report, try t.dataEvents())
        }
        let inMemory = try run(budget: nil), external = try run(budget: 64)
        #expect(external.report.files.map { [$0.added, $0.duplicates, $0.repeats] } == inMemory.report.files.map { [$0.added, $0.duplicates, $0.repeats] })
        #expect(external.events == inMemory.events)
        #expect(inMemory.report.files[9].added == 0 && inMemory.report.files[9].duplicates == inMemory.report.files[3].added)
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
