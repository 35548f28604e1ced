import Testing
@testable import EventLog

/// Damage before the last commit is never skipped and never decrypted into wrong data.
@Suite struct DamageTests {
    /// A log of three single-frame batches a, b, c; returns the frame layout.
    private func threeFrames(_ t: TestLog) throws -> [(offset: Int, size: Int, commit: Bool)] {
        let log = try t.create()
        try log.append(try batch(events("a", count: 2)))
        try log.append(try batch(events("b", count: 2)))
        try log.append(try batch(events("c", count: 2)))
        return try frameLayout(log)
    }

    private var all: [[UInt8]] { events("a", count: 2) + events("b", count: 2) + events("c", count: 2) }

    @Test func everyBitFlipInAMiddleFrameIsDetectedAtItsOffset() throws {
        let t = TestLog()
        let frames = try threeFrames(t)
        let middle = frames[1]
        let pristine = Disk.read(t.logPath)
        for bit in (middle.offset * 8)..<((middle.offset + middle.size) * 8) {
            Disk.flipBit(t.logPath, bit: bit)
            #expect { _ = try t.readAll() } throws: { damagedOffset($0) == UInt64(middle.offset) }
            do {
                _ = try t.readAll()
            } catch {
                #expect(damagedOffset(error) == UInt64(middle.offset), "bit \(bit): \(error)")
            }
            // A reader never hands out the altered frame, nor anything after it.
            let reader = try t.open(.readOnly)
            var delivered: [[UInt8]] = []
            var iterator = try reader.reader()
            #expect("bit \(bit)") {
                while let frame = try iterator.next() { frame.forEachEvent { _, b in delivered.append(Array(b)) } }
            } throws: { damagedOffset($0) == UInt64(middle.offset) }
            #expect(delivered == events("a", count: 2), "bit \(bit)")
            let report = try t.verify()
            #expect(!report.isOK && report.problems.count == 1 && report.problems[0].contains("offset \(middle.offset)"), "bit \(bit)")
            Disk.write(t.logPath, pristine)
        }
        #expect(try readAll(try t.open(.readOnly)) == all)
    }

    @Test func everyBitFlipInTheLastCommittedFrameIsDetected() throws {
        let t = TestLog()
        let last = try threeFrames(t)[2]
        let pristine = Disk.read(t.logPath)
        for bit in (last.offset * 8)..<((last.offset + last.size) * 8) {
            Disk.flipBit(t.logPath, bit: bit)
            for mode in [EventLog.AccessMode.readWrite, .readOnly] {
                do {
                    _ = try t.open(mode)
                    Issue.record("bit \(bit) opened in \(mode)")
                } catch {
                    let isDamage = damagedOffset(error) == UInt64(last.offset)
                    let isRollback = if case EventLogError.rolledBack = error { true } else { false }
                    #expect(isDamage || isRollback, "bit \(bit): \(error)")
                }
            }
            #expect(try t.verify().isOK == false)
            Disk.write(t.logPath, pristine)
        }
    }

    @Test func deletingAMiddleFrameIsDetected() throws {
        let t = TestLog()
        let f = try threeFrames(t)
        var bytes = Disk.read(t.logPath)
        bytes.removeSubrange(f[1].offset..<(f[1].offset + f[1].size))
        Disk.write(t.logPath, bytes)
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: UInt64(f[1].offset), defect: .sequenceMismatch(expected: 2, found: 3))) {
            _ = try t.open(.readWrite)
        }
    }

    @Test func reorderingFramesIsDetected() throws {
        let t = TestLog()
        let f = try threeFrames(t)
        let bytes = Disk.read(t.logPath)
        let a = bytes[..<f[1].offset], b = bytes[f[1].offset..<f[2].offset], c = bytes[f[2].offset...]
        Disk.write(t.logPath, Array(a + c + b))
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: UInt64(f[1].offset), defect: .sequenceMismatch(expected: 2, found: 3))) {
            _ = try t.open(.readWrite)
        }
    }

    @Test func duplicatingAFrameIsDetectedInTheMiddleAndAtTheEnd() throws {
        let t = TestLog()
        let f = try threeFrames(t)
        let bytes = Disk.read(t.logPath)
        let b = bytes[f[1].offset..<f[2].offset]
        Disk.write(t.logPath, Array(bytes[..<f[2].offset] + b + bytes[f[2].offset...]))
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: UInt64(f[2].offset), defect: .sequenceMismatch(expected: 3, found: 2))) {
            _ = try t.open(.readWrite)
        }
        // An authentic frame replayed after the last commit is not a torn write either.
        Disk.write(t.logPath, bytes + Array(b))
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: UInt64(bytes.count), defect: .sequenceMismatch(expected: 4, found: 2))) {
            _ = try t.open(.readWrite)
        }
    }

    @Test func aFrameSplicedInFromAnotherVaultIsDetected() throws {
        let t = TestLog()
        let f = try threeFrames(t)
        let other = TestLog()
        let otherFrames = try threeFrames(other)
        let foreign = Disk.read(other.logPath)[otherFrames[1].offset..<otherFrames[2].offset]
        var bytes = Disk.read(t.logPath)
        bytes.replaceSubrange(f[1].offset..<f[2].offset, with: foreign)
        Disk.write(t.logPath, bytes)
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: UInt64(f[1].offset), defect: .foreignVault)) {
            _ = try t.readAll()
        }
    }

    @Test func aFrameFromTheSameVaultIdUnderAnotherKeyFailsAuthentication() throws {
        let t = TestLog()
        let f = try threeFrames(t)
        // Same vault id, different master key: the header parses, the tag does not verify.
        let twin = TestLog()
        let twinLog = try EventLog.create(in: twin.directory.path, vaultID: t.vaultID, masterKey: twin.key)
        try twinLog.append(try batch(events("a", count: 2)))
        try twinLog.append(try batch(events("z", count: 2)))
        let twinFrames = try frameLayout(twinLog)
        var bytes = Disk.read(t.logPath)
        let forged = Disk.read(twin.logPath)[twinFrames[1].offset..<(twinFrames[1].offset + twinFrames[1].size)]
        bytes.replaceSubrange(f[1].offset..<f[2].offset, with: forged)
        Disk.write(t.logPath, bytes)
        do {
            _ = try t.readAll()
            Issue.record("a forged frame was accepted")
        } catch {
            #expect(damagedOffset(error) == UInt64(f[1].offset))
        }
    }

    @Test func rollingTheLogBackToAnOlderCopyIsDetectedThroughTheHead() throws {
        let t = TestLog()
        var oldCopy: [UInt8] = []
        do {
            let log = try t.create()
            try log.append(try batch(events("a", count: 2)))
            oldCopy = Disk.read(t.logPath)
            try log.append(try batch(events("b", count: 2)))
            try log.append(try batch(events("c", count: 2)))
        }
        Disk.write(t.logPath, oldCopy)
        for mode in [EventLog.AccessMode.readWrite, .readOnly] {
            #expect(throws: EventLogError.rolledBack(path: t.logPath, headSequence: 3, logSequence: 1)) { _ = try t.open(mode) }
        }
        #expect(try t.verify().problems.count == 1)
    }

    @Test func aForkedLogIsDetectedThroughTheHead() throws {
        let t = TestLog()
        var oldLog: [UInt8] = [], oldHead: [UInt8] = [], newHead: [UInt8] = []
        do {
            let log = try t.create()
            try log.append(try batch(events("a", count: 2)))
            (oldLog, oldHead) = (Disk.read(t.logPath), Disk.read(t.headPath))
            try log.append(try batch(events("b", count: 2)))
            newHead = Disk.read(t.headPath)
        }
        // Go back to the older state, write a different second batch, restore the newer head.
        Disk.write(t.logPath, oldLog)
        Disk.write(t.headPath, oldHead)
        do {
            let forked = try t.open(.readWrite)
            try forked.append(try batch(events("x", count: 2)))
        }
        Disk.write(t.headPath, newHead)
        for mode in [EventLog.AccessMode.readWrite, .readOnly] {
            #expect(throws: EventLogError.rolledBack(path: t.logPath, headSequence: 2, logSequence: 2)) { _ = try t.open(mode) }
        }
    }

    @Test func aHeadRecordFromAnotherVaultOrAlteredIsRefused() throws {
        let t = TestLog()
        _ = try threeFrames(t)
        let other = TestLog()
        _ = try threeFrames(other)
        Disk.write(t.headPath, Disk.read(other.headPath))
        #expect { _ = try t.open(.readOnly) } throws: { "\($0)" == t.headPath + ": head record invalid (authentication failed: written by another vault or altered)" }
        var report = try t.verify()
        #expect(!report.isOK)
        Disk.flipBit(other.headPath, bit: 200)
        #expect { _ = try other.open(.readOnly) } throws: { "\($0)" == other.headPath + ": head record invalid (authentication failed: written by another vault or altered)" }
        report = try other.verify()
        #expect(report.problems.first?.contains("head record") == true)
    }
}
