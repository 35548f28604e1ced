import Foundation
import SecureMemory
import Testing
@testable import EventLog

/// Log format 3: frame payloads compressed with raw DEFLATE before they are sealed.
@Suite struct CompressionTests {
    /// The flags of every frame of the log file at `path`, read from their headers.
    func frameFlags(_ path: String) throws -> [UInt16] {
        var flags: [UInt16] = []
        let file = Disk.read(path)
        var offset = LogFormat.fileHeaderSize
        while offset + LogFormat.frameHeaderSize <= file.count {
            let header = try #require(file[offset..<(offset + LogFormat.frameHeaderSize)].withUnsafeBytes { try? FrameHeader.decode($0).get() })
            flags.append(header.flags)
            offset += LogFormat.frameHeaderSize + Int(header.payloadLength)
        }
        return flags
    }

    @Test func compressibleEventsAreStoredSmallerAndReadBackExactly() throws {
        let t = TestLog()
        let events = (0..<20_000).map { i in Array("sample \(i % 50) HKQuantityTypeIdentifierStepCount 2024-03-\(10 + i % 9) value \(i % 7)".utf8) }
        do {
            let log = try t.create()
            try log.append(try batch(events))
        }
        let bytes = events.reduce(0) { $0 + $1.count }
        let size = try FileManager.default.attributesOfItem(atPath: t.logPath)[.size] as! Int
        #expect(size < bytes / 3)
        #expect(try t.readAll() == events)
        let report = try t.verify()
        #expect(report.isOK && report.events == UInt64(events.count))
        let flags = try frameFlags(t.logPath)
        #expect(!flags.isEmpty && flags.allSatisfy { $0 & LogFormat.deflateFlag != 0 })
    }

    /// A large frame of events that do not compress is decided by its first 64 KiB and stored as it
    /// is: every later read would inflate it for nothing. One that saves less than a sixteenth too.
    @Test func aLargeFrameThatDoesNotSaveASixteenthIsStoredAsItIs() throws {
        let t = TestLog()
        let events = (0..<6_000).map { _ in (0..<100).map { _ in UInt8.random(in: 0...255) } }
        do {
            let log = try t.create()
            try log.append(try batch(events))
        }
        let flags = try frameFlags(t.logPath)
        #expect(!flags.isEmpty && flags.allSatisfy { $0 & LogFormat.deflateFlag == 0 })
        #expect(try t.readAll() == events)
        // Past the probe, a frame must save a sixteenth: a tenth of each event compressible is not enough.
        let halfRandom = (0..<6_000).map { i in Array(repeating: UInt8(i % 7), count: 6) + (0..<94).map { _ in UInt8.random(in: 0...255) } }
        let joined = halfRandom.flatMap { $0 }
        #expect(joined.withUnsafeBytes { Deflater()?.deflate($0) } == nil)
    }

    /// A job compresses the same frames, to the same bytes, on one thread or on several: each
    /// worker fills only its own frames' slots, and every part gets back its own frames in order.
    @Test func aJobCompressesTheSameFramesOnOneThreadOrSeveral() throws {
        func part(_ keyID: UInt32, events: Int) throws -> CompressionJob.Part {
            let batch = try batch((0..<events).map { i in Array("key \(keyID) event \(i % 40) HKQuantityTypeIdentifierHeartRate \(i % 13)".utf8) })
            return CompressionJob.Part(keyID: keyID, batch: batch, slices: batch.frameSlices(targetSize: 1_500))
        }
        let parts = [try part(0, events: 700), try part(7, events: 3), try part(9, events: 180)]
        let single = CompressionJob(parts: parts)
        single.run()
        let several = CompressionJob(parts: parts)
        several.run(workers: 3)
        #expect(single.compressed.map(\.count) == parts.map(\.slices.count))
        #expect(several.compressed == single.compressed)
        for (part, frames) in zip(parts, several.compressed) {
            for (slice, frame) in zip(part.slices, frames) {
                let plain = part.batch.payload.withUnsafeBytes { Array($0[slice.range]) }
                if plain.count > 64 {
                    #expect(FrameCompression.inflate(try #require(frame), limit: 1 << 20) == plain)
                }
            }
        }
    }

    /// Many keys' events, interleaved, flushed together when the transaction's budget fills and
    /// at the commit (whose frames every core compresses): each key's events read back in order,
    /// every frame compressed, the chain whole.
    @Test func framesOfManyKeysFlushedTogetherReadBackInOrder() throws {
        let t = TestLog()
        let log = try t.create(targetFrameSize: 2_000)
        log.pendingBudget = 30_000
        var transaction = try log.beginTransaction()
        let labels = (1...24).map { "label-\($0)" }
        let ids = try labels.map { try log.keyID(forLabel: Array($0.utf8)) }
        var written: [String: [[UInt8]]] = [:]
        for round in 0..<150 {
            for (label, id) in zip(labels, ids) {
                let event = Array("\(label) round \(round) HKQuantityTypeIdentifierStepCount value \(round % 9)".utf8)
                try event.withUnsafeBytes { try log.append($0, keyID: id, to: &transaction) }
                written[label, default: []].append(event)
            }
        }
        try log.commit(&transaction)
        let all = try readAll(try t.open(.readOnly))
        #expect(all.count == 24 * 150)
        for label in labels { #expect(all.filter { $0.starts(with: Array("\(label) ".utf8)) } == written[label]) }
        #expect(try t.verify().isOK)
        let flags = try frameFlags(t.logPath)
        #expect(flags.count > 48)
        #expect(flags.allSatisfy { $0 & LogFormat.deflateFlag != 0 })
        #expect(flags.filter { $0 & LogFormat.commitFlag != 0 }.count == 1 && flags.last! & LogFormat.commitFlag != 0)
    }

    @Test func incompressibleEventsAreStoredAsTheyAre() throws {
        let t = TestLog()
        let events = (0..<200).map { _ in Sodium.randomBytes(500) }
        do { try t.create().append(try batch(events)) }
        let file = Disk.read(t.logPath)
        let header = try #require(file[LogFormat.fileHeaderSize...].withUnsafeBytes { try? FrameHeader.decode($0).get() })
        #expect(header.flags & LogFormat.deflateFlag == 0)
        #expect(try t.readAll() == events)
    }

    @Test func inflateRefusesWhatIsNotOneStreamWithinTheLimit() throws {
        let plain = [UInt8](repeating: 7, count: 200_000)
        let compressed = try #require(plain.withUnsafeBytes { Deflater()?.deflate($0) })
        #expect(compressed.count < 1_000)
        #expect(FrameCompression.inflate(compressed, limit: 200_000) == plain)
        #expect(FrameCompression.inflate(compressed, limit: 199_999) == nil)          // over the limit: no bomb
        #expect(FrameCompression.inflate(Array(compressed.dropLast(3)), limit: 1 << 20) == nil)  // cut
        #expect(FrameCompression.inflate(compressed + [0], limit: 1 << 20) == nil)    // trailing bytes
        #expect(FrameCompression.inflate(Sodium.randomBytes(300), limit: 1 << 20) == nil)
    }

    @Test func aVersionTwoFrameCannotClaimCompression() {
        var header = FrameHeader(version: 2, flags: LogFormat.commitFlag | LogFormat.deflateFlag, keyID: 1, payloadLength: 16, sequence: 1,
                                 firstEventIndex: 0, eventCount: 0, vaultID: Sodium.randomBytes(16),
                                 previousHash: Sodium.randomBytes(32), nonce: Sodium.randomBytes(24))
        #expect(header.encoded().withUnsafeBytes { FrameHeader.decode($0) } == .failure(.unknownFlags(LogFormat.commitFlag | LogFormat.deflateFlag)))
        header.version = 3
        #expect((try? header.encoded().withUnsafeBytes { try FrameHeader.decode($0).get() })?.isCompressed == true)
    }
}
