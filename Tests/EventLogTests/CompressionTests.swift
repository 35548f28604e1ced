import Foundation
import SecureMemory
import Testing
@testable import EventLog

/// Log format 3: frame payloads compressed with raw DEFLATE before they are sealed.
@Suite struct CompressionTests {
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
        var flags: [UInt16] = []
        let file = Disk.read(t.logPath)
        var offset = LogFormat.fileHeaderSize
        while offset + LogFormat.frameHeaderSize <= file.count {
            let header = try #require(file[offset..<(offset + LogFormat.frameHeaderSize)].withUnsafeBytes { try? FrameHeader.decode($0).get() })
            flags.append(header.flags)
            offset += LogFormat.frameHeaderSize + Int(header.payloadLength)
        }
        #expect(!flags.isEmpty && flags.allSatisfy { $0 & LogFormat.deflateFlag != 0 })
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
        let compressed = try #require(plain.withUnsafeBytes { FrameCompression.deflate($0) })
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
