@testable import EventLog
import SecureMemory
import TestSupport
import Testing

/// Crashes while appending: whatever was not acknowledged may vanish, nothing else may. In
/// memory: the subject is what opening makes of the bytes a crash left, not the disk.
@Suite struct TornTailTests {
    /// Builds a log whose last batch is on disk but unacknowledged (the head names the batch
    /// before it), as after a crash between the log's write and the head's replacement.
    private func logWithUnacknowledgedTail(_ t: TestLog) throws -> (acknowledged: [[UInt8]], tail: [[UInt8]], headBytes: [UInt8], acknowledgedLength: Int, full: [UInt8]) {
        let log = try t.create(targetFrameSize: 120)
        let a = events("a", count: 3), b = events("b", count: 4)
        try log.append(try batch(a))
        try log.append(try batch(b))
        let headBytes = t.read(t.headPath)
        let acknowledgedLength = t.read(t.logPath).count
        let c = events("c", count: 9, size: 30)
        try log.append(try batch(c))
        return (a + b, c, headBytes, acknowledgedLength, t.read(t.logPath))
    }

    @Test func truncationAtEveryOffsetOfTheLastBatchLosesOnlyThatBatch() throws {
        let t = TestLog(fileSystem: InMemoryFileSystem())
        let s = try logWithUnacknowledgedTail(t)
        #expect(s.full.count - s.acknowledgedLength > 400) // several frames are cut through
        let extra = events("d", count: 2)
        for cut in s.acknowledgedLength...s.full.count {
            t.write(t.logPath, Array(s.full.prefix(cut)))
            t.write(t.headPath, s.headBytes)
            let complete = cut == s.full.count
            do {
                let log = try t.open(.readWrite, targetFrameSize: 120)
                #expect(firstDifference(try readAll(log), s.acknowledged + (complete ? s.tail : [])) == nil, "cut at \(cut)")
                let torn = cut != s.acknowledgedLength && !complete
                #expect((log.tornTail != nil) == torn, "cut at \(cut)")
                if let tail = log.tornTail {
                    #expect(tail.offset == UInt64(s.acknowledgedLength))
                    #expect(tail.length == UInt64(cut - s.acknowledgedLength))
                }
                try log.append(try batch(extra))
            }
            let reopened = try t.open(.readOnly)
            #expect(firstDifference(try readAll(reopened), s.acknowledged + (complete ? s.tail : []) + extra) == nil, "cut at \(cut)")
            let report = try t.verify()
            #expect(report.isOK && report.tornTail == nil, "cut at \(cut): \(report.problems)")
        }
    }

    /// A power cut during a multi-frame append can persist any subset of its pages: authentic
    /// frames of the unacknowledged batch may follow a hole. That is a torn tail, not damage.
    @Test func holesInAnUnacknowledgedBatchAreATornTail() throws {
        let t = TestLog(fileSystem: InMemoryFileSystem())
        let s = try logWithUnacknowledgedTail(t)
        let layout = try frameLayout(try t.open(.readOnly))
        let tailFrames = layout.filter { $0.offset >= s.acknowledgedLength }
        #expect(tailFrames.count >= 3)
        for hole in tailFrames.dropLast() {
            var bytes = s.full
            for i in hole.offset..<(hole.offset + hole.size) { bytes[i] = 0 }
            t.write(t.logPath, bytes)
            t.write(t.headPath, s.headBytes)
            do {
                let log = try t.open(.readWrite)
                #expect(firstDifference(try readAll(log), s.acknowledged) == nil, "hole at \(hole.offset)")
                #expect(log.tornTail?.offset == UInt64(s.acknowledgedLength))
                try log.append(try batch(events("d", count: 1)))
            }
            #expect(try t.verify().isOK)
        }
    }

    @Test func readOnlyOpenReportsATornTailWithoutCuttingIt() throws {
        let t = TestLog(fileSystem: InMemoryFileSystem())
        let s = try logWithUnacknowledgedTail(t)
        let cut = s.acknowledgedLength + 150
        t.write(t.logPath, Array(s.full.prefix(cut)))
        t.write(t.headPath, s.headBytes)
        let log = try t.open(.readOnly)
        #expect(log.tornTail?.offset == UInt64(s.acknowledgedLength))
        #expect(firstDifference(try readAll(log), s.acknowledged) == nil)
        #expect(t.read(t.logPath).count == cut)
        let report = try t.verify()
        #expect(report.isOK)
        #expect(report.tornTail?.length == UInt64(150))
    }

    @Test func truncatingCommittedFramesIsARollbackNotATornTail() throws {
        let t = TestLog(fileSystem: InMemoryFileSystem())
        var afterA = 0
        do {
            let log = try t.create()
            try log.append(try batch(events("a", count: 3)))
            afterA = t.read(t.logPath).count
            try log.append(try batch(events("b", count: 3)))
        }
        let full = t.read(t.logPath)
        for cut in [afterA, afterA + 1, afterA + 50, full.count - 1] {
            t.write(t.logPath, Array(full.prefix(cut)))
            #expect(throws: EventLogError.rolledBack(path: t.logPath, headSequence: 2, logSequence: 1), "cut at \(cut)") {
                _ = try t.open(.readWrite)
            }
            #expect(throws: EventLogError.rolledBack(path: t.logPath, headSequence: 2, logSequence: 1)) {
                _ = try t.open(.readOnly)
            }
            #expect(try t.verify().isOK == false)
        }
    }

    /// The junk each case appends, named so that a test's arguments print short.
    static func junk(_ label: String) -> [UInt8] {
        switch label {
        case "random garbage": Sodium.randomBytes(777)
        case "zeros": [UInt8](repeating: 0, count: 4096)
        case "a lone magic": LogFormat.frameMagic
        default: Array(FrameHeader(flags: 1, keyID: 1, payloadLength: 64, sequence: 3, firstEventIndex: 6, eventCount: 1, vaultID: [UInt8](repeating: 9, count: 16), previousHash: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 24)).encoded().prefix(50))
        }
    }

    @Test(arguments: ["random garbage", "zeros", "a lone magic", "half a header"])
    func junkAfterTheLastCommitIsATornTailKeptAsideBeforeItIsCut(label: String) throws {
        let junk = Self.junk(label)
        let t = TestLog(label)
        let committed = events("a", count: 3) + events("b", count: 3)
        do {
            let log = try t.create()
            try log.append(try batch(Array(committed.prefix(3))))
            try log.append(try batch(Array(committed.suffix(3))))
        }
        let length = t.read(t.logPath).count
        t.append(t.logPath, junk)
        do {
            let log = try t.open(.readWrite)
            #expect(log.tornTail == TornTail(offset: UInt64(length), length: UInt64(junk.count), uncommittedFrames: 0,
                                             keptAs: "events.log.torn.1", digest: FrameCipher.digest(junk)))
            // The cut bytes are kept, whole, beside the log before it is cut.
            #expect(t.read(t.directory.path + "/events.log.torn.1") == junk)
            #expect(firstDifference(try readAll(log), committed) == nil)
            #expect(t.read(t.logPath).count == length)
            try log.append(try batch(events("c", count: 1)))
        }
        #expect(try readAll(try t.open(.readOnly)) == committed + events("c", count: 1))
        #expect(try t.verify().isOK)
    }

    @Test func aHeaderClaimingAnOversizedPayloadIsATornTailAndNothingIsAllocated() throws {
        let t = TestLog(fileSystem: InMemoryFileSystem())
        let last = try t.create().append(try batch(events("a", count: 2)))
        var header = FrameHeader(flags: 1, keyID: 1, payloadLength: LogFormat.maxPayloadLength, sequence: 2, firstEventIndex: 2, eventCount: 1, vaultID: t.vaultID, previousHash: last.chainHash, nonce: Sodium.randomBytes(24))
        t.append(t.logPath, header.encoded())
        #expect(try t.open(.readWrite).tornTail?.length == 112)
        header.payloadLength = UInt32.max
        t.append(t.logPath, header.encoded())
        #expect(try t.open(.readWrite).tornTail?.length == 112)
    }
}
