import Foundation
import Importers
@testable import EventLog
@testable import Projections
import ResearchBundle
@testable import HealthModel
import SecureMemory
import SyntheticHealth
import TestSupport
import Testing
import VaultEvents
import VaultTestSupport
@testable import Vault

/// Erasure by destroying keys (issue 14): what is erased can never be read again, from anything
/// in the vault directory; everything else stays byte for byte.
@Suite struct ErasureTests {
    static let february = LocalMonth(year: 2024, month: 2), march = LocalMonth(year: 2024, month: 3)

    /// A vault holding 75 generated days from 2024-01-10 (heart data in January to March).
    final class World {
        let dir = TemporaryDirectory("erase")
        let vault: Vault
        let zip: String
        var path: String { dir.path + "/vault" }

        init() throws {
            vault = try makeVault(at: dir.path + "/vault", passphrase: "p")
            zip = dir.path + "/export.zip"
            try SyntheticExport.writeZip(to: zip, options: .init(days: 75, firstDay: (2024, 1, 10), tripStart: 200))
            _ = try vault.importFiles([zip])
        }

        /// Every readable event's bytes, by the key its frame is sealed with, read with the
        /// vault's own keys straight from the log.
        func decryptedByKey() throws -> [UInt32: [[UInt8]]] {
            let log = try EventLog.open(in: path, masterKey: vault.masterKey, mode: .readOnly)
            var byKey: [UInt32: [[UInt8]]] = [:]
            var reader = try log.reader()
            while let frame = try reader.next() {
                frame.forEachEvent { _, bytes in byKey[frame.keyID, default: []].append(Array(bytes)) }
            }
            return byKey
        }

        /// The key table as it is on disk.
        func keyTable() throws -> KeyTable {
            try KeyTable.open(Array(try Data(contentsOf: URL(fileURLWithPath: path + "/keys.sealed"))), vaultID: vault.log.vaultID,
                              tableKey: LogKeyring(masterKey: vault.masterKey).tableKey, path: "keys.sealed")
        }

        /// Heart samples starting in `months`.
        func heartSamples(in months: Set<LocalMonth>) throws -> Int {
            try vault.allEvents().filter { _, event in
                guard case .sample(let s) = event else { return false }
                return s.category == .heart && months.contains(DataLabel.month(of: s.start))
            }.count
        }
    }

    static func isHeart(_ label: [UInt8], in months: [LocalMonth]) -> Bool {
        months.contains { label == Array("heart/\($0)".utf8) }
    }

    @Test func erasedMonthsAreUnreadableFromEveryFileAndTheRestIsByteIdentical() throws {
        let w = try World()
        let heartBefore = try w.heartSamples(in: [Self.february, Self.march])
        #expect(heartBefore > 100)
        let januaryHeart = try w.heartSamples(in: [LocalMonth(year: 2024, month: 1)])
        let before = try w.decryptedByKey()
        let table = try w.keyTable()
        let erasedKeys = table.entries.filter { Self.isHeart($0.label, in: [Self.february, Self.march]) }
        #expect(erasedKeys.count == 2)
        let secrets = erasedKeys.map { entry in entry.key!.withUnsafeBytes { Array($0) } }
        let erasedIDs = Set(erasedKeys.map(\.id))
        // Everything the erased keys sealed, and the samples among it (the rest are the
        // definitions of the names those samples brought in, erased with them).
        let erasedEntries = erasedIDs.reduce(0) { $0 + (before[$1]?.count ?? 0) }
        let erasedEvents = erasedIDs.reduce(0) { $0 + (before[$1]?.filter { !$0.withUnsafeBytes { EncodedEvent($0).isDefinition } }.count ?? 0) }
        #expect(erasedEvents == heartBefore && erasedEntries > erasedEvents)

        let summary = try w.vault.erase(categories: [.heart], from: Self.february, to: Self.march, now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(summary == ErasureSummary(categories: ["heart"], months: ["2024-02", "2024-03"], samplesErased: erasedEvents))

        // With every key the vault holds, the erased frames give nothing and every other frame
        // gives exactly what it gave before; the audit key has the erasure's record added.
        let after = try w.decryptedByKey()
        for id in erasedIDs { #expect(after[id] == nil) }
        for (id, events) in before where !erasedIDs.contains(id) && id != EventLog.auditKeyID { #expect(after[id] == events) }
        #expect(Array(after[EventLog.auditKeyID]!.prefix(before[EventLog.auditKeyID]!.count)) == before[EventLog.auditKeyID]!)
        #expect(try w.heartSamples(in: [Self.february, Self.march]) == 0)
        #expect(try w.heartSamples(in: [LocalMonth(year: 2024, month: 1)]) == januaryHeart)

        // No file of the vault directory holds a destroyed key: not the key table, not a
        // leftover, not the read models' image; every key table found there lacks them.
        for name in try FileManager.default.contentsOfDirectory(atPath: w.path) {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: w.path + "/" + name)))
            for secret in secrets { #expect(!Self.contains(bytes, secret), "\(name) holds a destroyed key") }
            if let found = try? KeyTable.open(bytes, vaultID: w.vault.log.vaultID, tableKey: LogKeyring(masterKey: w.vault.masterKey).tableKey, path: name) {
                #expect(found.entries.filter { erasedIDs.contains($0.id) }.allSatisfy { $0.key == nil })
            }
        }
        // The read models no longer count them; verify passes and says what was erased.
        let models = try w.vault.summary(metric: "HKQuantityTypeIdentifierHeartRate", by: .month, from: LocalDay(year: 2024, month: 1, day: 1),
                                         to: LocalDay(year: 2024, month: 3, day: 31))
        #expect(models.map(\.period) == ["2024-01"])
        let report = try Vault.verify(at: w.path, passphrase: passphrase("p"))
        #expect(report.isOK && report.erasedEvents == UInt64(erasedEntries) && report.erasedFrames >= 2)
        let erasures = try w.vault.consentLedger().erasures
        #expect(erasures.map(\.labels) == [["heart/2024-02", "heart/2024-03"]] && erasures[0].events == erasedEvents)
        #expect(erasures[0].at == Date(timeIntervalSince1970: 1_800_000_000))

        // A bundle of all heart data, raw, and a plaintext copy of the read models hold none of it.
        try RecipientKeyFiles.generate(prefix: w.dir.path + "/lab")
        try w.vault.addRecipient(name: "lab", publicKeyFile: w.dir.path + "/lab.pub")
        try w.vault.grant(recipient: "lab", categories: [.heart], from: nil, to: nil, granularity: .raw, expires: nil, purpose: nil)
        _ = try w.vault.export(to: "lab", path: w.dir.path + "/heart.bundle", now: Date(timeIntervalSince1970: 1_800_000_100))
        _ = try BundleReader.open(w.dir.path + "/heart.bundle", keyFile: w.dir.path + "/lab.key", outputDirectory: w.dir.path + "/out")
        let lines = try String(contentsOfFile: w.dir.path + "/out/data/heart.ndjson", encoding: .utf8).split(separator: "\n")
        #expect(lines.count > 100)
        #expect(!lines.contains { $0.contains("\"start\":\"2024-02") || $0.contains("\"start\":\"2024-03") })
        try w.vault.writePlaintextProjections(to: w.dir.path + "/plain.sqlite")
        let plain = try ReadModels(plainCopyAt: w.dir.path + "/plain.sqlite")
        let heartDays = "SELECT count(*) FROM daily d JOIN metrics m ON m.id = d.metric_id WHERE m.identifier = 'HKQuantityTypeIdentifierHeartRate' AND d.day >= "
        #expect(try plain.query(heartDays + "\(LocalDay(year: 2024, month: 2, day: 1).dayNumber)").rows == [[.integer(0)]])
        #expect(try plain.query(heartDays + "\(LocalDay(year: 2024, month: 1, day: 1).dayNumber)").rows != [[.integer(0)]])
    }

    @Test func importingTheSameExportAgainDoesNotBringErasedDataBackUnlessAllowed() throws {
        let w = try World()
        let heart = try w.heartSamples(in: [Self.february])
        _ = try w.vault.erase(categories: [.heart], from: Self.february, to: Self.february)
        let again = try w.vault.importFiles([w.zip])
        #expect(again.added == 0 && again.erased == heart)
        #expect(again.files[0].erased == heart)
        #expect(try w.heartSamples(in: [Self.february]) == 0)
        let allowed = try w.vault.importFiles([w.zip], allowErased: true)
        #expect(allowed.added == heart && allowed.erased == 0)
        #expect(try w.heartSamples(in: [Self.february]) == heart)
        // The month has a live key again: the next import counts duplicates, not erasures.
        let third = try w.vault.importFiles([w.zip])
        #expect(third.added == 0 && third.erased == 0)
    }

    @Test func erasingEverythingOfACategoryAndNothingAtAll() throws {
        let w = try World()
        let all = try w.vault.erase(categories: [.sleep])
        #expect(all.categories == ["sleep"] && all.months == ["2024-01", "2024-02", "2024-03"])
        #expect(all.samplesErased == ExportRecordCount.records(in: try ExportRecordCount.xml(inZip: w.zip), typePrefix: "HKCategoryTypeIdentifierSleepAnalysis"))
        #expect(try w.vault.allEvents().allSatisfy { _, event in
            if case .sample(let s) = event { return s.category != .sleep }
            return true
        })
        let none = try w.vault.erase(categories: [.reproductive])
        #expect(none == ErasureSummary(categories: [], months: [], samplesErased: 0))
        #expect(try w.vault.consentLedger().erasures.count == 1)
        #expect(throws: VaultError.invalidErasure(reason: "--to 2024-01 is before --from 2024-03")) {
            _ = try w.vault.erase(categories: [.heart], from: Self.march, to: LocalMonth(year: 2024, month: 1))
        }
    }

    @Test func aFormatOneVaultIsUpgradedByItsFirstWriterAndKeepsEverything() throws {
        let dir = TemporaryDirectory("format1")
        let path = try FixtureVaults.copy("vault-format1", in: dir)
        let pass = passphrase("fixture passphrase")
        #expect(try EventLog.formatVersion(in: path) == 1)
        // A reader opens it as it is.
        let reader = try Vault.open(at: path, passphrase: pass)
        let original = try reader.allEvents().map(\.event)
        #expect(original.filter { !$0.isAudit }.count == 8)
        #expect(try reader.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [500, 800])
        // The first writer upgrades it: the same events, each data event under its own key.
        let writer = try Vault.open(at: path, passphrase: pass, mode: .readWrite)
        #expect(try EventLog.formatVersion(in: path) == 3)
        let upgraded = try writer.allEvents().map(\.event)
        #expect(upgraded.filter(\.isAudit) == original.filter(\.isAudit))
        #expect(Set(upgraded.filter { !$0.isAudit }.map { "\($0)" }) == Set(original.filter { !$0.isAudit }.map { "\($0)" }))
        #expect(Set(writer.log.dataKeys.map { String(decoding: $0.label, as: UTF8.self) })
                == ["activity/2024-02", "activity/2024-03", "heart/2024-02", "heart/2024-03", "sleep/2024-03", "workouts/2024-03", "profile/undated"])
        #expect(try writer.summary(metric: "heart-rate", by: .day, from: nil, to: nil).map(\.value) == [72, 75])
        #expect(try Vault.verify(at: path, passphrase: pass).isOK)
        #expect(!FileManager.default.fileExists(atPath: path + "/upgrade.tmp") && !FileManager.default.fileExists(atPath: path + "/upgrade.ready"))
        // And erasure works on it.
        #expect(try writer.erase(categories: [.heart], from: Self.february, to: Self.february).samplesErased == 1)
        #expect(try writer.summary(metric: "heart-rate", by: .day, from: nil, to: nil).map(\.value) == [75])
    }

    /// A vault of log format 2 (frames not compressed) opens, answers as the build that wrote it
    /// did, takes appends as format 2, erases and verifies.
    @Test func aFormatTwoVaultKeepsWorkingAsFormatTwo() throws {
        let dir = TemporaryDirectory("format2")
        let path = try FixtureVaults.copy("vault-format2", in: dir)
        let pass = passphrase("fixture passphrase")
        #expect(try EventLog.formatVersion(in: path) == 2)
        let writer = try Vault.open(at: path, passphrase: pass, mode: .readWrite)
        #expect(try writer.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [500, 800])
        #expect(try writer.summary(metric: "heart-rate", by: .day, from: nil, to: nil).map(\.value) == [72, 75])
        #expect(try writer.goalChanges().map(\.value) == [450])
        let start = HealthTimestamp(seconds: 1_709_625_600, utcOffset: 3600)  // 2024-03-05
        try writer.append([.sample(HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "Phone"), start: start, end: start,
                                                value: .quantity(DecimalValue(mantissa: 321, scale: 0), unit: "count")))])
        #expect(try EventLog.formatVersion(in: path) == 2)
        #expect(try writer.summary(metric: "steps", by: .day, from: nil, to: nil).map(\.value) == [500, 800, 321])
        #expect(try writer.erase(categories: [.heart], from: Self.february, to: Self.february).samplesErased == 1)
        #expect(try Vault.verify(at: path, passphrase: pass).isOK)
    }

    @Test func namesThatCameInWithErasedDataGoWithItAndARekeyKeepsTheErasure() throws {
        let dir = TemporaryDirectory("erase-names")
        let path = dir.path + "/vault"
        let start = HealthTimestamp(seconds: 1_709_280_000, utcOffset: 3600)  // 2024-03-01
        let flow = HealthSample(type: "HKCategoryTypeIdentifierMenstrualFlow", source: HealthSource(name: "Cycle Tracker Zeta"),
                                start: start, end: start, value: .category("HKCategoryValueMenstrualFlowHeavy"))
        let steps = HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "Anna's Phone"),
                                 start: start, end: start, value: .quantity(DecimalValue(mantissa: 12, scale: 0), unit: "count"))
        do {
            let vault = try makeVault(at: path, passphrase: "p")
            try vault.append([.sample(flow), .sample(steps)])
            _ = try vault.erase(categories: [.reproductive])
            // No frame the vault can still read names the erased sample's type, value or source.
            let log = try EventLog.open(in: path, masterKey: vault.masterKey, mode: .readOnly)
            var readable: [UInt8] = []
            var reader = try log.reader()
            while let frame = try reader.next() { frame.forEachEvent { _, bytes in readable += Array(bytes) } }
            for name in ["MenstrualFlow", "Cycle Tracker Zeta", "FlowHeavy"] { #expect(!Self.contains(readable, Array(name.utf8)), "\(name)") }
            #expect(Self.contains(readable, Array("Anna's Phone".utf8)))
            #expect(try vault.allEvents().map(\.event).filter { !$0.isAudit } == [.sample(steps)])
        }

        // After a re-key the erased month stays refused: its tombstone moved to the new key table.
        try Vault.rekey(at: path, from: passphrase("p"), to: passphrase("q"))
        let rekeyed = try Vault.open(at: path, passphrase: passphrase("q"), mode: .readWrite)
        #expect(rekeyed.log.dataKeys.map { String(decoding: $0.label, as: UTF8.self) + ($0.erasedAt == nil ? "" : " (erased)") }
                == ["activity/2024-03", "reproductive/2024-03 (erased)"])
        let csv = dir.path + "/flow.csv"
        try Data("type,start,end,value\nHKCategoryTypeIdentifierMenstrualFlow,2024-03-01T09:00:00+01:00,2024-03-01T09:00:00+01:00,HKCategoryValueMenstrualFlowHeavy\n".utf8)
            .write(to: URL(fileURLWithPath: csv))
        let report = try rekeyed.importFiles([csv])
        #expect(report.added == 0 && report.erased == 1, "\(report)")
    }

    @Test func aFrameWhoseHeaderNamesAnotherKeyCannotHideFromTheAuditTrail() throws {
        let dir = TemporaryDirectory("erase-hide")
        let path = dir.path + "/vault"
        let vault = try makeVault(at: path, passphrase: "p")
        try RecipientKeyFiles.generate(prefix: dir.path + "/lab")
        try vault.addRecipient(name: "lab", publicKeyFile: dir.path + "/lab.pub")
        try vault.grant(recipient: "lab", categories: [.heart], from: nil, to: nil, granularity: .daily, expires: nil, purpose: nil)
        try vault.revoke(recipient: "lab", categories: nil)
        try vault.setGoal(.move, value: 500, from: LocalDay(year: 2024, month: 3, day: 1))
        let frames = try vault.log.frameSummaries()
        try vault.log.checkpointFrameIndex()
        // The revocation's frame: the second to last one, before the goal's.
        let victim = frames[frames.count - 2]
        #expect(victim.keyID == EventLog.auditKeyID)
        // Without the passphrase one can still rewrite the key id and fix the header's CRC.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path + "/events.log")))
        let at = Int(victim.offset)
        bytes[at + 8] = 2
        let crc = bytes[at..<(at + 108)].withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((at + 108)..<(at + 112), with: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/events.log"))
        // The audit trail is read from the audit key's frames, found through the frame index
        // (which recorded the frame's true key when its chain was hashed): the frame is read
        // where it stands and names a key it was not sealed with.
        let reopened = try Vault.open(at: path, passphrase: passphrase("p"))
        #expect(throws: EventLogError.damaged(path: path + "/events.log", offset: victim.offset, defect: .unknownKey(2))) {
            _ = try reopened.consentLedger()
        }
        // Without the index, the audit key's frames' running digest (in the head record) no
        // longer comes out.
        try FileManager.default.removeItem(atPath: path + "/frames.index")
        let withoutIndex = try Vault.open(at: path, passphrase: passphrase("p"))
        #expect { _ = try withoutIndex.consentLedger() } throws: { "\($0)".contains("events.log is damaged at byte offset ") && "\($0)".contains(": hash chain broken (a frame before it was changed, removed or replaced)") }
        #expect(try !Vault.verify(at: path, passphrase: passphrase("p")).isOK)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return false }
        var start = 0
        while start <= haystack.count - needle.count {
            if haystack[start] == first, haystack[start..<start + needle.count].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }

    // MARK: Crashes

    /// Runs an erase of February's heart data that stops at each step in turn, on a copy of one
    /// small vault, and checks what the next writer finds: nothing erased, or all of it with one
    /// audit record, never a half. An acknowledged erase is never undone.
    private func atEveryStep(_ label: String, stop: (_ step: Int, _ path: String) throws -> (fired: Bool, acknowledged: Bool)) throws
        -> (steps: Int, kept: Int, erased: Int) {
        let template = TemporaryDirectory("erase-template")
        let source = template.path + "/vault"
        let zip = template.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 6, firstDay: (2024, 2, 27), tripStart: 200))
        let heartInFebruary: Int
        do {
            let vault = try makeVault(at: source, passphrase: "p")
            _ = try vault.importFiles([zip])
            _ = try vault.projections()
            heartInFebruary = try vault.allEvents().filter { _, e in
                if case .sample(let s) = e { return s.category == .heart && DataLabel.month(of: s.start) == Self.february }
                return false
            }.count
        }
        #expect(heartInFebruary > 10)
        var step = 0, kept = 0, erased = 0
        while true {
            let dir = TemporaryDirectory("erase\(label)\(step)")
            let path = dir.path + "/vault"
            try FileManager.default.copyItem(atPath: source, toPath: path)
            let (fired, acknowledged) = try stop(step, path)
            // Before any writer finishes what the crash interrupted, `verify` (which writes
            // nothing) finds no damage: an erasure whose audit event is not in the log yet is not one.
            let verifiedFirst = try Vault.verify(at: path, passphrase: passphrase("p"))
            #expect(verifiedFirst.isOK, "\(label) step \(step), before a writer: \(verifiedFirst.problems)")
            let vault = try Vault.open(at: path, passphrase: passphrase("p"), mode: .readWrite)
            let heart = try vault.allEvents().filter { _, e in
                if case .sample(let s) = e { return s.category == .heart && DataLabel.month(of: s.start) == Self.february }
                return false
            }.count
            let records = try vault.consentLedger().erasures
            let rows = try vault.summary(metric: "HKQuantityTypeIdentifierHeartRate", by: .month, from: nil, to: nil).map(\.period)
            if heart == 0 {
                erased += 1
                #expect(records.count == 1 && records[0].labels == ["heart/2024-02"] && records[0].events == heartInFebruary, "\(label) step \(step)")
                #expect(rows == ["2024-03"], "\(label) step \(step): the read models still count erased data")
                #expect(vault.log.unrecordedErasures.isEmpty)
            } else {
                kept += 1
                #expect(heart == heartInFebruary && records.isEmpty && rows == ["2024-02", "2024-03"], "\(label) step \(step)")
                #expect(!acknowledged, "an acknowledged erase was undone (\(label) at step \(step))")
            }
            // The table an erase replaced is zeroed and gone once a writer has opened the vault.
            #expect(!FileManager.default.fileExists(atPath: path + "/keys.sealed.old"), "\(label) step \(step)")
            let verified = try Vault.verify(at: path, passphrase: passphrase("p"))
            #expect(verified.isOK, "\(label) step \(step): \(verified.problems)")
            step += 1
            if acknowledged && !fired { return (step, kept, erased) }
        }
    }

    @Test func anEraseCrashedAtEveryStepIsAllOrNothing() throws {
        let (steps, kept, erased) = try atEveryStep("crash") { step, path in
            let faulty = FaultInjectingFileSystem(failAt: step)
            do {
                let vault = try Vault.open(at: path, passphrase: passphrase("p"), mode: .readWrite, fileSystem: faulty)
                _ = try vault.erase(categories: [.heart], from: Self.february, to: Self.february)
                return (faulty.crashed, true)
            } catch {
                #expect(faulty.crashed, "failed without an injected crash: \(error)")
                return (true, false)
            }
        }
        #expect(kept > 3 && erased > 3, "kept \(kept), erased \(erased)")
        print("fault injection: erase crashed at each of \(steps) steps (\(kept) kept everything, \(erased) erased all)")
    }

    /// An erase cut after destroying its keys and before its audit event: `verify` says so as a
    /// warning, not damage, and still names an earlier version of a read-model block put back
    /// outside what the erased months' purge rewrites (a practice entry's).
    @Test func anEraseCutBeforeItsEventIsAWarningAndStaleBlocksAreStillNamed() throws {
        let dir = TemporaryDirectory("erase-cut")
        let path = dir.path + "/vault", zip = dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 6, firstDay: (2024, 2, 27), tripStart: 200))
        let database = path + "/projections.db"
        let old: Data
        do {
            let vault = try makeVault(at: path, passphrase: "p")
            _ = try vault.importFiles([zip])
            _ = try vault.projections()
            old = try Data(contentsOf: URL(fileURLWithPath: database))
            _ = try vault.practice(name: "push-ups", repetitions: 20, seconds: 60, at: LocalTime.parse("2024-03-01 08:00", timeZone: TimeZone(identifier: "Europe/Berlin")!)!)
            _ = try vault.projections()
            // The erase's first step alone, as a crash right after it leaves the vault.
            let heart = Set(vault.log.dataKeys.filter { DataLabel(bytes: $0.label) == DataLabel(category: .heart, month: Self.february) }.map(\.id))
            #expect(heart.count == 1)
            try vault.log.destroyKeys(heart, at: Date(), eraseID: [1, 2, 3, 4, 5, 6, 7, 8])
        }
        let current = try Data(contentsOf: URL(fileURLWithPath: database))
        let cut = try Vault.verify(at: path, passphrase: passphrase("p"))
        #expect(cut.isOK, "\(cut.problems)")
        #expect(cut.warnings.count == 1 && cut.warnings[0].contains("an erase was interrupted"), "\(cut.warnings)")
        // The file's blocks as PutBackAttackTests splices them: 4,140 bytes each after 64.
        func block(_ index: Int) -> Range<Int> { (64 + index * 4140)..<(64 + (index + 1) * 4140) }
        let changed = (1..<(min(old.count, current.count) - 64) / 4140).filter { old[block($0)] != current[block($0)] }
        #expect(!changed.isEmpty)
        var named = 0
        for index in changed {
            var spliced = current
            spliced.replaceSubrange(block(index), with: old[block(index)])
            try spliced.write(to: URL(fileURLWithPath: database))
            let report = try Vault.verify(at: path, passphrase: passphrase("p"))
            // Named as differing from the log (held, practices), or as a structure that no longer
            // holds together (SQLite's "malformed"): a problem either way, never silence.
            if report.problems.count == 1, report.problems[0].contains("projections.db: the read models ") { named += 1 }
        }
        #expect(named == changed.count, "\(named) of the blocks \(changed) named")
        try current.write(to: URL(fileURLWithPath: database))
        // The next writer finishes the erase: no warning after it.
        _ = try Vault.open(at: path, passphrase: passphrase("p"), mode: .readWrite)
        let finished = try Vault.verify(at: path, passphrase: passphrase("p"))
        #expect(finished.isOK && finished.warnings.isEmpty, "\(finished.problems) \(finished.warnings)")
    }

    @Test func anEraseLosingPowerAtEveryStepIsAllOrNothing() throws {
        let (steps, kept, erased) = try atEveryStep("power") { step, path in
            let disk = PowerLossFileSystem(failAt: step)
            var result = (fired: true, acknowledged: false)
            do {
                let vault = try Vault.open(at: path, passphrase: passphrase("p"), mode: .readWrite, fileSystem: disk)
                _ = try vault.erase(categories: [.heart], from: Self.february, to: Self.february)
                result = (disk.died, true)
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            try disk.losePower()
            return result
        }
        #expect(kept > 3 && erased > 3, "kept \(kept), erased \(erased)")
        print("fault injection: erase lost power at each of \(steps) steps (\(kept) kept everything, \(erased) erased all)")
    }
}
