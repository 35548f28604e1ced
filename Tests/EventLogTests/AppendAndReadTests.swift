import Testing
@testable import EventLog

@Suite struct AppendAndReadTests {
    @Test func eventsRoundTripThroughReopen() throws {
        let t = TestLog()
        let a = events("a", count: 3), b = events("b", count: 1000, size: 40)
        do {
            let log = try t.create()
            try log.append(try batch(a))
            let position = try log.append(try batch(b))
            #expect(position.sequence == 2)
            #expect(position.eventCount == 1003)
        }
        let reopened = try t.open(.readOnly)
        #expect(try readAll(reopened) == a + b)
        #expect(reopened.tornTail == nil)
        let report = try t.verify()
        #expect(report.isOK)
        #expect(report.frames == 2)
        #expect(report.events == 1003)
    }

    @Test func largeBatchSpansFramesAndCommitsOnlyOnItsLast() throws {
        let t = TestLog()
        let log = try t.create(targetFrameSize: 200)
        let many = events("m", count: 50, size: 30)
        try log.append(try batch(many))
        let layout = try frameLayout(log)
        // 50 events of 30 bytes, each with its 1-byte length: 6 fit in a frame's 200 bytes (186),
        // so 8 full frames and a ninth with the last 2.
        #expect(layout.count == 9)
        #expect(layout.dropLast().allSatisfy { !$0.commit })
        #expect(layout.last?.commit == true)
        #expect(try readAll(log) == many)
    }

    @Test func readerResumesFromAPositionAndRejectsAForeignOne() throws {
        let t = TestLog()
        let log = try t.create()
        let middle = try log.append(try batch(events("a", count: 2)))
        try log.append(try batch(events("b", count: 2)))
        var reader = try log.reader(from: middle)
        let frame = try #require(try reader.next())
        #expect(frame.sequence == 2)
        #expect(Array(frame.event(at: 0)) == events("b", count: 1)[0])
        #expect(try reader.next() == nil)

        let other = TestLog()
        let otherLog = try other.create()
        let foreign = try otherLog.append(try batch(events("x", count: 1)))
        var wrong = try log.reader(from: LogPosition(sequence: middle.sequence, eventCount: middle.eventCount, offset: middle.offset, chainHash: foreign.chainHash))
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: middle.offset, defect: .chainBroken)) { try wrong.next() }
    }

    @Test func aPositionBeyondTheCommittedEndIsRefusedNotReadAsUpToDate() throws {
        let t = TestLog()
        let log = try t.create()
        let end = try log.append(try batch(events("a", count: 2)))
        var atEnd = try log.reader(from: end)
        #expect(try atEnd.next() == nil)
        var stale = end
        stale.offset += 500
        stale.sequence += 3
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: stale.offset, defect: .chainBroken)) { _ = try log.reader(from: stale) }
    }

    @Test func aHugeFrameSizeIsClampedSoEveryBatchStaysReadable() throws {
        let t = TestLog()
        let log = try t.create()
        log.targetFrameSize = Int.max
        #expect(log.targetFrameSize == LogFormat.maxPlaintextLength)
        log.targetFrameSize = 0
        #expect(log.targetFrameSize == 1)
    }

    @Test func emptyEventsAndEmptyBatches() throws {
        let t = TestLog()
        let log = try t.create()
        let before = log.committed
        #expect(try log.append(EventBatch()) == before)
        try log.append(try batch([[], [1], []]))
        #expect(try readAll(log) == [[], [1], []])
    }

    @Test func anOversizedEventIsRefusedBeforeAnythingIsWritten() throws {
        var b = EventBatch()
        let huge = [UInt8](repeating: 7, count: EventBatch.maxEventSize + 1)
        #expect(throws: EventLogError.eventTooLarge(size: huge.count, limit: EventBatch.maxEventSize)) { try b.append(huge) }
        #expect(b.isEmpty)
    }

    @Test func readOnlyHandlesRefuseToAppend() throws {
        let t = TestLog()
        _ = try t.create()
        let log = try t.open(.readOnly)
        #expect(throws: EventLogError.readOnly) { try log.append(try batch(events("a", count: 1))) }
    }

    @Test func nothingInTheLogOrHeadIsReadable() throws {
        let t = TestLog()
        let log = try t.create()
        let marker = Array("steps-secret-value-12345".utf8)
        try log.append(try batch([marker]))
        for path in [t.logPath, t.headPath] {
            let bytes = Disk.read(path)
            #expect(!bytes.indices.contains { i in bytes[i...].starts(with: marker) })
        }
    }

    @Test func creatingOverAnExistingLogIsRefused() throws {
        let t = TestLog()
        _ = try t.create()
        #expect(throws: EventLogError.alreadyExists(path: t.logPath)) {
            _ = try EventLog.create(in: t.directory.path, vaultID: t.vaultID, masterKey: t.key)
        }
    }
}
