import Foundation
import SecureMemory
import Testing
@testable import EventLog

/// The frame index (`frames.index`): a checkpoint of the frames' headers that a command extends
/// by the tail instead of hashing the whole log, and never uses when it is not this log's.
@Suite struct FrameIndexTests {
    /// Commits `rounds` batches of audit events and events of two data keys, small frames.
    func fill(_ log: EventLog, rounds: Range<Int>) throws {
        for round in rounds {
            var transaction = try log.beginTransaction()
            let heart = try log.keyID(forLabel: Array("heart/2024-0\(1 + round % 3)".utf8))
            let steps = try log.keyID(forLabel: Array("steps/2024-03".utf8))
            for i in 0..<12 {
                let event = Array("event \(round).\(i)".utf8)
                try event.withUnsafeBytes { try log.append($0, keyID: [EventLog.auditKeyID, heart, steps][i % 3], to: &transaction) }
            }
            try log.commit(&transaction)
        }
    }

    /// What the frames are, read the slow way: every frame in order, authenticated.
    func reference(_ t: TestLog) throws -> [String] {
        var frames: [String] = []
        var reader = try t.open(.readOnly).reader()
        while let frame = try reader.next() {
            frames.append("\(frame.sequence) \(frame.offset) key \(frame.keyID) first \(frame.firstEventIndex) events \(frame.headerEventCount) \(frame.position.chainHash)")
        }
        return frames
    }

    func summaries(_ log: EventLog) throws -> [String] {
        try log.frameSummaries().map { "\($0.sequence) \($0.offset) key \($0.keyID) first \($0.firstEventIndex) events \($0.eventCount) \($0.chainHash)" }
    }

    var indexPath: (TestLog) -> String { { LogDirectory($0.directory.path).frameIndex } }

    @Test func theIndexIsSavedUsedAndExtendedByTheTailOnly() throws {
        let t = TestLog()
        let first: EventLog.FrameSummary
        let count: Int
        do {
            let log = try t.create(targetFrameSize: 40)
            try fill(log, rounds: 0..<4)
            #expect(try summaries(log) == reference(t))
            #expect(FileManager.default.fileExists(atPath: indexPath(t)))
            first = try log.frameSummaries()[0]
            count = try log.frameSummaries().count
        }

        // Damage the payload of the first frame: a whole-chain hash would now fail, the index
        // (which hashed it when it was sound) does not look at it again. Only `verify` reads it.
        Disk.flipBit(t.logPath, bit: Int(first.offset + 120) * 8)
        #expect(try t.open(.readOnly).frameSummaries().count == count)
        #expect(try !t.verify().isOK)
        Disk.flipBit(t.logPath, bit: Int(first.offset + 120) * 8)
        let reopened = try t.open()

        // Appends after the index: a few frames extend it in memory, read from the tail by the
        // next command; past 64 new frames it is saved again; a checkpoint saves it at once.
        let before = try Data(contentsOf: URL(fileURLWithPath: indexPath(t)))
        try fill(reopened, rounds: 4..<7)
        _ = try reopened.frameSummaries()
        #expect(try Data(contentsOf: URL(fileURLWithPath: indexPath(t))) == before)
        let third = try t.open(.readOnly)
        #expect(try summaries(third) == reference(t))
        try fill(reopened, rounds: 7..<30)
        _ = try reopened.frameSummaries()
        let saved = try Data(contentsOf: URL(fileURLWithPath: indexPath(t)))
        #expect(saved != before)
        try fill(reopened, rounds: 30..<31)
        try reopened.checkpointFrameIndex()
        #expect(try Data(contentsOf: URL(fileURLWithPath: indexPath(t))) != saved)
        #expect(try summaries(t.open(.readOnly)) == reference(t))
    }

    @Test func damageInTheTailAfterTheIndexIsFound() throws {
        let t = TestLog()
        let log = try t.create(targetFrameSize: 40)
        try fill(log, rounds: 0..<3)
        _ = try log.frameSummaries()
        try fill(log, rounds: 3..<4)
        // A frame after the index's position, its payload changed (not the last frame: the head
        // record names that one and opening checks it).
        let frames = try reference(t)
        let victimSequence = frames.count - 3
        let victimOffset = UInt64(frames[victimSequence - 1].split(separator: " ")[1])!
        Disk.flipBit(t.logPath, bit: Int(victimOffset + 130) * 8)
        let reopened = try t.open(.readOnly)
        #expect { _ = try reopened.frameSummaries() } throws: { "\($0)".contains(": hash chain broken (a frame before it was changed, removed or replaced)") && damagedOffset($0) != nil }
    }

    @Test func aForeignDamagedOrNewerIndexIsNotUsed() throws {
        let t = TestLog()
        do {
            let log = try t.create(targetFrameSize: 40)
            try fill(log, rounds: 0..<3)
            _ = try log.frameSummaries()
        }
        let pristine = try Data(contentsOf: URL(fileURLWithPath: indexPath(t)))
        // Files of the log as they are now, to roll back to.
        let names = ["events.log", "events.head", "keys.sealed"]
        let saved = try names.map { try Data(contentsOf: URL(fileURLWithPath: t.directory.path + "/" + $0)) }
        let expected = try reference(t)

        // Another vault's index.
        let other = TestLog()
        let otherLog = try other.create(targetFrameSize: 40)
        try fill(otherLog, rounds: 0..<3)
        _ = try otherLog.frameSummaries()
        try FileManager.default.removeItem(atPath: indexPath(t))
        try FileManager.default.copyItem(atPath: indexPath(other), toPath: indexPath(t))
        #expect(try summaries(t.open(.readOnly)) == expected)

        // A damaged one.
        var damaged = pristine
        damaged[damaged.count - 20] ^= 1
        try damaged.write(to: URL(fileURLWithPath: indexPath(t)))
        #expect(try summaries(t.open(.readOnly)) == expected)

        // One of a later state of this log, after the log was rolled back under it.
        do { try fill(try t.open(), rounds: 3..<6) }
        _ = try t.open(.readOnly).frameSummaries()
        for (name, data) in zip(names, saved) { try data.write(to: URL(fileURLWithPath: t.directory.path + "/" + name)) }
        #expect(try summaries(t.open(.readOnly)) == expected)
    }

    @Test func malformedPlaintextIsRefused() {
        let genesis = LogPosition(sequence: 0, eventCount: 0, offset: 64, chainHash: [UInt8](repeating: 1, count: 32))
        let hash = [UInt8](repeating: 2, count: 32)
        let one = FrameIndex(frames: [EventLog.FrameSummary(offset: 64, sequence: 1, keyID: 1, firstEventIndex: 0, eventCount: 3, chainHash: hash)],
                             position: LogPosition(sequence: 1, eventCount: 3, offset: 200, chainHash: hash))
        let bytes = one.plaintext
        func parses(_ b: [UInt8], _ position: LogPosition) -> Bool {
            b.withUnsafeBytes { FrameIndex(plaintext: $0, position: position, genesis: genesis) } != nil
        }
        #expect(parses(bytes, one.position))
        #expect(!parses(bytes, LogPosition(sequence: 1, eventCount: 4, offset: 200, chainHash: hash)))   // events do not add up
        #expect(!parses(bytes, LogPosition(sequence: 2, eventCount: 3, offset: 200, chainHash: hash)))   // count
        #expect(!parses(bytes, LogPosition(sequence: 1, eventCount: 3, offset: 64, chainHash: hash)))    // frame past the end
        #expect(!parses(Array(bytes.dropLast()), one.position))
        #expect(!parses([2] + bytes.dropFirst(), one.position))                                           // version
    }
}
