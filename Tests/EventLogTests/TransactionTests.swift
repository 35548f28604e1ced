import Testing
@testable import EventLog

/// Commits larger than memory: frames go out as they fill, the commit decides.
@Suite struct TransactionTests {
    private func add(_ events: [[UInt8]], to tx: inout LogTransaction, in log: EventLog) throws {
        for e in events { try e.withUnsafeBytes { try log.append($0, to: &tx) } }
    }

    @Test func framesWrittenBeforeTheCommitAreInvisibleUntilItAndThenAllThere() throws {
        let t = TestLog()
        let log = try t.create(targetFrameSize: 256)
        try log.append(try batch(events("a", count: 2)))
        var tx = try log.beginTransaction()
        let big = events("t", count: 100, size: 30)
        try add(big, to: &tx, in: log)
        #expect(Disk.read(t.logPath).count > 3000) // frames are on disk already
        let reader = try t.open(.readOnly)
        #expect(try readAll(reader) == events("a", count: 2))
        #expect(reader.tornTail != nil)
        try log.commit(&tx)
        #expect(try readAll(try t.open(.readOnly)) == events("a", count: 2) + big)
        #expect(try t.verify().isOK)
    }

    @Test func aCommitWithNothingPendingEndsWithAnEmptyMarkerFrame() throws {
        let t = TestLog()
        let log = try t.create(targetFrameSize: 64)
        var tx = try log.beginTransaction()
        // Exactly one frame's worth, flushed by the append itself: nothing left for the commit.
        try add([[UInt8](repeating: 1, count: 70)], to: &tx, in: log)
        let position = try log.commit(&tx)
        let layout = try frameLayout(log)
        #expect(layout.count == 2)
        #expect(layout.last?.commit == true && layout.last?.size == 128)
        #expect(position.eventCount == 1)
        #expect(try readAll(try t.open(.readOnly)) == [[UInt8](repeating: 1, count: 70)])
    }

    @Test func rollbackLeavesTheLogAsItWas() throws {
        let t = TestLog()
        let log = try t.create(targetFrameSize: 128)
        try log.append(try batch(events("a", count: 2)))
        let before = Disk.read(t.logPath)
        var tx = try log.beginTransaction()
        try add(events("x", count: 50), to: &tx, in: log)
        try log.rollback(&tx)
        #expect(Disk.read(t.logPath) == before)
        try log.append(try batch(events("b", count: 1)))
        #expect(try readAll(try t.open(.readOnly)) == events("a", count: 2) + events("b", count: 1))
    }

    @Test func aWriterThatDiesMidTransactionLeavesATornTail() throws {
        let t = TestLog()
        do {
            let log = try t.create(targetFrameSize: 128)
            try log.append(try batch(events("a", count: 2)))
            var tx = try log.beginTransaction()
            try add(events("x", count: 50), to: &tx, in: log)
            // The handle goes away without commit or rollback, as a killed process would.
        }
        let log = try t.open(.readWrite)
        #expect(log.tornTail != nil)
        #expect(try readAll(log) == events("a", count: 2))
        try log.append(try batch(events("b", count: 1)))
        #expect(try t.verify().isOK)
    }
}
