import Foundation
import SecureMemory
import Testing
@testable import EventLog

/// Frames sealed with per-label data keys, and what destroying a key does to them.
@Suite struct DataKeyTests {
    /// Every event a fresh reader gives, in log order.
    func readAll(_ log: EventLog) throws -> [[UInt8]] {
        var all: [[UInt8]] = []
        var reader = try log.reader()
        while let frame = try reader.next() { frame.forEachEvent { _, bytes in all.append(Array(bytes)) } }
        return all
    }

    /// Writes audit events and events of two labels in one commit, with frames small enough that
    /// each label's events span several.
    func fill(_ t: TestLog) throws -> (audit: [[UInt8]], heart: [[UInt8]], steps: [[UInt8]]) {
        let log = try t.create(targetFrameSize: 200)
        let audit = events("audit", count: 5), heart = events("heart", count: 20), steps = events("steps", count: 20)
        var transaction = try log.beginTransaction()
        let heartKey = try log.keyID(forLabel: Array("heart/2024-03".utf8))
        let stepsKey = try log.keyID(forLabel: Array("steps/2024-03".utf8))
        #expect(heartKey == KeyTable.firstID && stepsKey == KeyTable.firstID + 1)
        #expect(try log.keyID(forLabel: Array("heart/2024-03".utf8)) == heartKey)
        for i in 0..<20 {
            if i < 5 { try audit[i].withUnsafeBytes { try log.append($0, to: &transaction) } }
            try heart[i].withUnsafeBytes { try log.append($0, keyID: heartKey, to: &transaction) }
            try steps[i].withUnsafeBytes { try log.append($0, keyID: stepsKey, to: &transaction) }
        }
        try log.commit(&transaction)
        return (audit, heart, steps)
    }

    @Test func eventsOfEachLabelKeepTheirOrderAndEveryKeySurvivesReopening() throws {
        let t = TestLog()
        let (audit, heart, steps) = try fill(t)
        let reopened = try t.open(.readOnly)
        let all = try readAll(reopened)
        #expect(all.count == 45)
        #expect(all.filter { $0.starts(with: Array("audit".utf8)) } == audit)
        #expect(all.filter { $0.starts(with: Array("heart".utf8)) } == heart)
        #expect(all.filter { $0.starts(with: Array("steps".utf8)) } == steps)
        // The audit events gathered before the first data frame filled went out ahead of it.
        #expect(all.first.map { $0.starts(with: Array("audit".utf8)) } == true)
        #expect(reopened.dataKeys.map { String(decoding: $0.label, as: UTF8.self) } == ["heart/2024-03", "steps/2024-03"])
        #expect(reopened.dataKeys.allSatisfy { $0.erasedAt == nil })
        let report = try t.verify()
        #expect(report.isOK && report.events == 45 && report.erasedFrames == 0)
    }

    @Test func aDestroyedKeyLeavesItsFramesChainedAndUnreadableAndTheRestIdentical() throws {
        let t = TestLog()
        let (audit, _, steps) = try fill(t)
        let oldTable = Disk.read(LogDirectory(t.directory.path).keys)
        let oldHead = Disk.read(t.headPath)
        // The same handle, a reader and (once the writer is gone) a new writer all skip the
        // erased frames and nothing else.
        func check(_ log: EventLog) throws {
            let all = try readAll(log)
            #expect(all.filter { $0.starts(with: Array("heart".utf8)) }.isEmpty)
            #expect(all.filter { $0.starts(with: Array("audit".utf8)) } == audit)
            #expect(all.filter { $0.starts(with: Array("steps".utf8)) } == steps)
        }
        let when = Date(timeIntervalSince1970: 1_800_000_000)
        var heartKey: UInt32 = 0
        do {
            let writer = try t.open()
            heartKey = writer.dataKeys.first { $0.label == Array("heart/2024-03".utf8) }!.id
            try writer.destroyKeys([heartKey], at: when, eraseID: [1, 2, 3, 4, 5, 6, 7, 8])
            #expect(writer.dataKeys.first { $0.id == heartKey }?.erasedAt == when)
            try check(writer)
            try check(try t.open(.readOnly))
        }
        try check(try t.open())
        let report = try t.verify()
        #expect(report.isOK && report.erasedEvents == 20 && report.erasedFrames > 1)
        // Nothing of the key is left: not in the new table, and the old file was overwritten
        // through its descriptor before the rename freed it (the bytes kept here are a backup).
        let table = try KeyTable.open(Disk.read(LogDirectory(t.directory.path).keys), vaultID: t.vaultID,
                                      tableKey: LogKeyring(masterKey: t.key).tableKey, path: "keys.sealed")
        #expect(table.entries.first { $0.id == heartKey }?.key == nil)
        // The table as it was before, put back alone, is refused: the head record names the one
        // in force.
        let keys = LogDirectory(t.directory.path).keys
        Disk.write(keys, oldTable)
        #expect(throws: EventLogError.keyTableInvalid(path: keys, reason: "not the one the head record names: an older or another copy was put back")) {
            _ = try t.open(.readOnly)
        }
        // With the head of that time too (a backup of both), the frames open again: the threat
        // model's stated limit, shown here so that it stays true only for backups.
        Disk.write(t.headPath, oldHead)
        #expect(try readAll(try t.open(.readOnly)).filter { $0.starts(with: Array("heart".utf8)) }.count == 20)
    }

    @Test func aFrameWithAKeyTheTableLacksIsDamageAndADamagedTableIsNamed() throws {
        let t = TestLog()
        _ = try fill(t)
        let keys = LogDirectory(t.directory.path).keys
        let table = Disk.read(keys)
        try FileManager.default.removeItem(atPath: keys)
        #expect(throws: EventLogError.keyTableInvalid(path: keys, reason: "missing")) { _ = try t.open() }
        let report = try t.verify()
        #expect(report.problems == [EventLogError.keyTableInvalid(path: keys, reason: "missing").description])
        // A table of the right vault that the head record does not name (an older copy, one
        // lacking the frames' keys) is refused.
        Disk.write(keys, KeyTable().sealed(vaultID: t.vaultID, tableKey: LogKeyring(masterKey: t.key).tableKey))
        #expect(throws: EventLogError.keyTableInvalid(path: keys, reason: "not the one the head record names: an older or another copy was put back")) {
            _ = try t.readAll()
        }
        var flipped = table
        flipped[flipped.count - 3] ^= 1
        Disk.write(keys, flipped)
        #expect(throws: EventLogError.keyTableInvalid(path: keys, reason: "fails authentication")) { _ = try t.open(.readOnly) }
        Disk.write(keys, Array(table.prefix(20)))
        #expect(throws: EventLogError.keyTableInvalid(path: keys, reason: "truncated")) { _ = try t.open(.readOnly) }
    }

    /// A sparse `keys.sealed.old` of a terabyte put in the directory (issue 35's review) is neither
    /// read nor zeroed by the next writer: it was never a table (a table is at most 64 MiB), and
    /// only its name goes.
    @Test(.timeLimit(.minutes(10))) func aSparseOldKeyTableIsNotReadOrWrittenWhole() throws {
        let t = TestLog()
        let written = try fill(t)
        let old = t.directory.path + "/keys.sealed.old"
        #expect(FileManager.default.createFile(atPath: old, contents: Data("planted".utf8)))
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: old))
        try handle.truncate(atOffset: 1 << 40)
        try handle.close()
        let log = try t.open(.readWrite)
        #expect(!FileManager.default.fileExists(atPath: old))
        let expected = (written.audit + written.heart + written.steps).sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try readAll(log).sorted { $0.lexicographicallyPrecedes($1) } == expected)
    }

    @Test func keysMadeByARolledBackTransactionAreForgotten() throws {
        let t = TestLog()
        let log = try t.create()
        var transaction = try log.beginTransaction()
        let id = try log.keyID(forLabel: Array("sleep/2024-01".utf8))
        try events("sleep", count: 3)[0].withUnsafeBytes { try log.append($0, keyID: id, to: &transaction) }
        try log.rollback(&transaction)
        #expect(log.dataKeys.isEmpty)
        let table = try KeyTable.open(Disk.read(LogDirectory(t.directory.path).keys), vaultID: t.vaultID,
                                      tableKey: LogKeyring(masterKey: t.key).tableKey, path: "keys.sealed")
        #expect(table.entries.isEmpty)
        let unknown = EventLogError.damaged(path: LogDirectory(t.directory.path).keys, offset: 0, defect: .unknownKey(id))
        var next = try log.beginTransaction()
        #expect(throws: unknown) { try events("x", count: 1)[0].withUnsafeBytes { try log.append($0, keyID: id, to: &next) } }
        // The key is checked when a run of its events starts: the rolled-back transaction's last
        // key was this one, and it is checked again all the same.
        #expect(throws: unknown) { try events("x", count: 1)[0].withUnsafeBytes { try log.append($0, keyID: id, to: &transaction) } }
    }

    @Test func aTransactionOverManyLabelsHoldsNoMoreThanItsBudget() throws {
        let t = TestLog()
        let log = try t.create()
        log.pendingBudget = 4_000
        var transaction = try log.beginTransaction()
        var written: [String: [[UInt8]]] = [:]
        for month in 1...12 {
            for category in ["heart", "sleep", "steps"] {
                let label = "\(category)/2024-\(month < 10 ? "0" : "")\(month)"
                let id = try log.keyID(forLabel: Array(label.utf8))
                for event in events(label, count: 20) {
                    try event.withUnsafeBytes { try log.append($0, keyID: id, to: &transaction) }
                    written[label, default: []].append(event)
                    #expect(transaction.pendingBytes <= log.pendingBudget)
                }
            }
        }
        try log.commit(&transaction)
        let all = try readAll(try t.open(.readOnly))
        #expect(all.count == 36 * 20)
        for (label, events) in written { #expect(all.filter { $0.starts(with: Array(label.utf8)) } == events) }
        #expect(try t.verify().isOK)
    }

    @Test func secureBytesWhoseFillingFailsAreFreedOnce() throws {
        struct Refused: Error, Equatable {}
        for _ in 0..<100 {
            #expect(throws: Refused()) { _ = try SecureBytes(count: 32) { _ in throw Refused() } }
        }
    }
}
