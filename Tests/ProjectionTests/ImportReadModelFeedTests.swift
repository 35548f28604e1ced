import EventLog
import Foundation
@testable import HealthModel
import SyntheticHealth
import TestSupport
import Testing
import VaultTestSupport
@testable import Vault

/// An import feeds the read models as it appends, in a transaction committed after the log's
/// (`ImportReadModelFeed`): what they answer then is exactly what reading the log gives, and an
/// import that cannot feed them leaves them to catch up from the log.
@Suite struct ImportReadModelFeedTests {
    typealias Fixture = VaultProjectionTests.Fixture

    /// The answers of the read models as they are, then after a rebuild from the log: equal.
    private func expectSameAsRebuild(_ vault: Vault, _ comment: Comment? = nil) throws {
        let answers = try VaultProjectionTests.answers(vault)
        #expect(vault.projectionNotice == nil)
        _ = try vault.rebuildProjections()
        #expect(firstDifference(try VaultProjectionTests.answers(vault), answers) == nil, comment)
    }

    @Test func anImportBringsTheReadModelsUpToDateItselfAsTheLogWould() throws {
        let f = Fixture()
        let (early, _) = try f.export(days: 15, name: "early.zip")
        let (later, _) = try f.export(days: 30, name: "later.zip")
        let stored = f.path + "/" + Vault.projectionsFileName
        do {
            let vault = try f.create()
            _ = try vault.projections()
            let before = try Data(contentsOf: URL(fileURLWithPath: stored))
            _ = try vault.importFiles([early])
            #expect(vault.importFedReadModels)
            // Written by the import itself, before anyone asked the read models anything.
            #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) != before)
            try vault.setGoal(.move, value: 700, from: LocalDay(year: 2024, month: 3, day: 25))
            _ = try vault.importFiles([later])   // the first 15 days again: only the rest is new
            #expect(vault.importFedReadModels)
        }
        // Another process finds them at the log's position: nothing to catch up, same answers.
        let reader = try f.open(.readOnly)
        let answers = try VaultProjectionTests.answers(reader)
        #expect(reader.projectionNotice == nil)
        #expect(try reader.rings().count == 30)
        try expectSameAsRebuild(try f.open())
        #expect(firstDifference(try VaultProjectionTests.answers(try f.open(.readOnly)), answers) == nil)
    }

    @Test func aFailedImportLeavesTheReadModelsAsTheyWere() throws {
        let f = Fixture()
        let vault = try f.create()
        _ = try vault.importFiles([try f.export(days: 10, name: "a.zip").0])
        let answers = try VaultProjectionTests.answers(vault)
        let (more, _) = try f.export(days: 20, firstDay: (2024, 5, 1), name: "b.zip")
        let broken = f.dir.path + "/broken.xml"
        try Data("<?xml version=\"1.0\"?>\n<HealthData>\n <Record type=\"HKQuantityTypeIdentifierStepCount\"".utf8)
            .write(to: URL(fileURLWithPath: broken))
        #expect { _ = try vault.importFiles([more, broken]) } throws: { "\($0)" == broken + ":3:2: not well-formed XML: file ends inside markup (truncated?); nothing was imported" }
        #expect(!vault.importFedReadModels)
        #expect(firstDifference(try VaultProjectionTests.answers(vault), answers) == nil)
        #expect(firstDifference(try VaultProjectionTests.answers(try f.open(.readOnly)), answers) == nil)
        try expectSameAsRebuild(vault)
    }

    /// Companion JSON follows the upsert rule, decided at the commit: the session appends events
    /// it holds no value of, so the read models catch up from the log instead, and answer the same.
    @Test func anImportThatCannotFeedThemLeavesThemToCatchUp() throws {
        let f = Fixture()
        let vault = try f.create()
        _ = try vault.importFiles([try f.export(days: 8, name: "a.zip").0])
        #expect(vault.importFedReadModels)

        let json = f.dir.path + "/steps.json"
        try Data(#"{"metric":"STEPS","data":[{"timeRange":"2024-03-21 09:00/2024-03-21 09:30","value":1234}]}"#.utf8)
            .write(to: URL(fileURLWithPath: json))
        #expect(try vault.importFiles([json]).added == 1)
        #expect(!vault.importFedReadModels)
        try expectSameAsRebuild(vault, "after companion JSON")
    }

    /// Identities past the memory budget are decided from bytes set aside when the file ends: what
    /// is new then reaches the read models as bytes, read with its key's tables, and they answer
    /// as the log does (a ten-year import replayed its whole log after the commit before).
    @Test func eventsDecidedOutsideMemoryFeedTheReadModelsToo() throws {
        let f = Fixture()
        let vault = try f.create()
        _ = try vault.importFiles([try f.export(days: 8, name: "a.zip").0])

        // Expected to outgrow the identities' memory: fed from the bytes set aside.
        vault.importIdentityBudgetSlots = 1024
        let (b, _) = try f.export(days: 12, name: "b.zip")
        let first = try vault.importFiles([b])
        #expect(first.added > 0 && first.duplicates > 0)
        #expect(vault.importFedReadModels)
        try expectSameAsRebuild(vault, "after a large import")

        // The same export again: everything set aside is a duplicate, nothing reaches them.
        let again = try vault.importFiles([b])
        #expect(again.added == 0 && again.duplicates == first.added + first.duplicates)
        #expect(vault.importFedReadModels)
        try expectSameAsRebuild(vault, "after the same import again")

        // Three records, but their month's identities, read from the vault, outgrow the memory
        // budget during the import: the feed goes on with the bytes set aside.
        let xml = f.dir.path + "/three.xml"
        let records = (0..<3).map { i in
            #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Pedometer" unit="count" startDate="2024-03-22 0\#(i):00:00 +0100" endDate="2024-03-22 0\#(i):10:00 +0100" value="\#(100 + i)"/>"#
        }
        try Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n\(records.joined(separator: "\n"))\n</HealthData>\n".utf8)
            .write(to: URL(fileURLWithPath: xml))
        #expect(try vault.importFiles([xml]).added == 3)
        #expect(vault.importFedReadModels)
        try expectSameAsRebuild(vault, "after identities outside memory")
    }
}
