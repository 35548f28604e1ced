import Foundation
@testable import Importers
import SyntheticHealth
import TestSupport
import Testing

/// The FIT decoder (issue 40) against Garmin's own FIT SDK for Python: every real file in
/// `Tests/Fixtures/fit` (python-fitparse's test files, MIT) read by both, and the figures the SDK
/// gave (`oracle.json`, made by `scripts/fit-oracle.py`) compared with ours, file by file. Files
/// the SDK reads only in part are checked against what it says: a cut file and a corrupt header.
@Suite struct FITDecoderTests {
    static let directory = FITFixtures.directory
    static var oracle: [String: [String: Any]] { FITFixtures.oracle }

    static func messages(_ name: String) throws -> ([FITMessage], FITDecoder.Summary) {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
        var all: [FITMessage] = []
        let summary = try FITDecoder.decode(bytes) { all += $0 }
        return (all, summary)
    }

    static let readWhole = oracle.filter { ($0.value["errors"] as? [String])?.isEmpty == true }.keys.sorted()

    @Test(arguments: readWhole) func figuresMatchGarminsSDK(file: String) throws {
        let expected = Self.oracle[file]!
        let (messages, summary) = try Self.messages(file)
        #expect(summary.damage == nil, "\(file): \(String(describing: summary.damage))")
        func of(_ global: UInt16) -> [FITMessage] { messages.filter { $0.global == global } }
        let fileID = of(0).first
        #expect(fileID?.integer(0).map(Int.init) == expected["type"] as? Int, "\(file) type")
        #expect(fileID?.integer(1).map(Int.init) == expected["manufacturer"] as? Int, "\(file) manufacturer")
        #expect(fileID?.integer(2).map(Int.init) == expected["product"] as? Int, "\(file) product")
        let sessions = of(18)
        let expectedSessions = expected["sessions"] as! [[String: Any]]
        #expect(sessions.count == expectedSessions.count, "\(file) sessions")
        for (session, want) in zip(sessions, expectedSessions) {
            #expect(session.date(2).map(Int.init) == want["start"] as? Int, "\(file) session start")
            #expect(session.date(253).map(Int.init) == want["end"] as? Int, "\(file) session end")
            #expect(session.integer(5).map(Int.init) == want["sport"] as? Int, "\(file) sport")
            #expect(session.integer(6).map(Int.init) == want["subSport"] as? Int, "\(file) sub-sport")
            Self.close(session.value(7, scale: 1000), want["elapsed"], "\(file) elapsed")
            Self.close(session.value(8, scale: 1000), want["timer"], "\(file) timer")
            Self.close(session.value(9, scale: 100), want["distance"], "\(file) distance")
            #expect(session.integer(11).map(Int.init) == want["calories"] as? Int, "\(file) calories")
            #expect(session.integer(16).map(Int.init) == want["avgHeartRate"] as? Int, "\(file) average heart rate")
            #expect(session.integer(17).map(Int.init) == want["maxHeartRate"] as? Int, "\(file) maximum heart rate")
        }
        #expect(of(19).count == expected["laps"] as? Int, "\(file) laps")
        let records = of(20)
        #expect(records.count == expected["records"] as? Int, "\(file) records")
        let positioned = records.filter { $0.degrees(0) != nil && $0.degrees(1) != nil }
        #expect(positioned.count == expected["recordsWithPosition"] as? Int, "\(file) records with a position")
        #expect(records.filter { $0.integer(3) != nil }.count == expected["recordsWithHeartRate"] as? Int, "\(file) records with a heart rate")
        if let first = expected["firstPosition"] as? [Double], let last = expected["lastPosition"] as? [Double] {
            Self.close(positioned.first?.degrees(0), first[0], "\(file) first latitude", tolerance: 1e-7)
            Self.close(positioned.first?.degrees(1), first[1], "\(file) first longitude", tolerance: 1e-7)
            Self.close(positioned.last?.degrees(0), last[0], "\(file) last latitude", tolerance: 1e-7)
            Self.close(positioned.last?.degrees(1), last[1], "\(file) last longitude", tolerance: 1e-7)
        }
        #expect(records.first?.date(253).map(Int.init) == expected["firstRecord"] as? Int, "\(file) first record")
        #expect(records.last?.date(253).map(Int.init) == expected["lastRecord"] as? Int, "\(file) last record")
        let offset = of(34).compactMap { activity -> Int? in
            guard let local = activity.integer(5), let at = activity.timestamp else { return nil }
            return Int(local) - Int(at)
        }.first
        #expect(offset == expected["localOffset"] as? Int, "\(file) local offset")
        #expect(of(55).count == expected["monitoring"] as? Int, "\(file) monitoring messages")
        let weights = of(30).compactMap { $0.value(0, scale: 100) }
        #expect(weights.map { ($0 * 100).rounded() / 100 } == expected["weights"] as? [Double], "\(file) weights")
    }

    /// Compressed timestamp headers, which Garmin's Python SDK does not read: against
    /// python-fitparse's reading of the same file.
    @Test func compressedTimestampsMatchFitparse() throws {
        let expected = try #require(Self.oracle["compressed-speed-distance.fit"]?["fitparse"] as? [String: Any])
        let (messages, summary) = try Self.messages("compressed-speed-distance.fit")
        let records = messages.filter { $0.global == 20 }
        #expect(summary.compressedTimestamps > 0 && summary.damage == nil)
        #expect(records.count == expected["records"] as? Int)
        #expect(records.filter { $0.integer(3) != nil }.count == expected["recordsWithHeartRate"] as? Int)
        #expect(records.first?.timestamp.map(Int.init) == expected["firstRecordRaw"] as? Int)
        #expect(records.last?.timestamp.map(Int.init) == expected["lastRecordRaw"] as? Int)
    }

    /// A file cut inside its records is refused whole, naming where it ends; a chained file whose
    /// second header is corrupt keeps the first file (its CRC checked) and says where the rest broke,
    /// at the byte the SDK names too.
    @Test func damageIsNamedByItsByte() throws {
        #expect(throws: FITDecoder.Damage.self) { try Self.messages("activity-unexpected-eof.fit") }
        let error = #expect(throws: FITDecoder.Damage.self) { try Self.messages("activity-unexpected-eof.fit") }
        #expect(error?.reason.contains("cut short") == true, "\(String(describing: error))")
        let (messages, summary) = try Self.messages("activity-settings-corruptheader.fit")
        #expect(summary.files == 1 && messages.filter { $0.global == 20 }.count == 14)
        #expect(summary.damage?.offset == 771 && summary.damage?.reason == "not a FIT file header", "\(String(describing: summary.damage))")
        // One flipped byte in the records fails the file's CRC.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.directory + "/garmin-fenix-5-run.fit")))
        bytes[200] ^= 0x01
        let flipped = #expect(throws: FITDecoder.Damage.self) { try FITDecoder.decode(bytes) { _ in } }
        #expect(flipped?.reason == "the file's CRC does not match its bytes")
    }

    /// The generator's activity (fuzz seeds, benchmarks) reads back as written: a record a second,
    /// one lap, one session of its sport and length, its local offset. Written with its own CRC code.
    @Test func aGeneratedActivityReadsBackAsWritten() throws {
        let bytes = SyntheticFIT.activity(start: 1_717_228_800, seconds: 600, utcOffset: 7_200, sport: 2, seed: 9)
        var messages: [FITMessage] = []
        let summary = try FITDecoder.decode(bytes) { messages += $0 }
        #expect(summary.files == 1 && summary.damage == nil)
        let records = messages.filter { $0.global == 20 }
        #expect(records.count == 600 && records.allSatisfy { $0.degrees(0) != nil && $0.integer(3) != nil })
        #expect(records.first?.date(253) == 1_717_228_800 && records.last?.date(253) == 1_717_228_800 + 599)
        let session = try #require(messages.first { $0.global == 18 })
        #expect(session.integer(5) == 2 && session.value(8, scale: 1000) == 600 && session.date(2) == 1_717_228_800)
        let activity = try #require(messages.first { $0.global == 34 })
        #expect(activity.integer(5).map { $0 - Int64(activity.timestamp!) } == 7_200)
        var cut = bytes
        cut.removeLast(5)
        #expect(throws: FITDecoder.Damage.self) { try FITDecoder.decode(cut) { _ in } }
    }

    /// The CRC is CRC-16/ARC: its check value over "123456789".
    @Test func theCRCIsCRC16ARC() {
        #expect(FITCRC.of(ArraySlice(Array("123456789".utf8))) == 0xBB3D)
        #expect(FITCRC.of([]) == 0)
    }

    /// Fields are read from the record's bytes when asked for: a number the definition repeats is
    /// its first valid copy, big-endian fields read as such, an invalid value is none, and a value
    /// set on the message (the strap's stored heart rate) is read before the bytes.
    @Test func fieldsAreReadFromTheRecordsBytes() throws {
        let definition = FITDefinition(global: 20, bigEndian: true,
                                       fields: [(3, 1, 0x02), (3, 1, 0x02), (253, 4, 0x86), (0, 4, 0x85), (7, 2, 0x84), (1, 4, 0x85)],
                                       developerSizes: [2])
        let bytes: [UInt8] = [0xEE, 0xFF, 120, 0x3B, 0x9A, 0xCA, 0x00, 0xFF, 0xFF, 0xFF, 0xFE, 0x01, 0x2C, 0x7F, 0xFF, 0xFF, 0xFF, 9, 9]
        var p = 1
        var message = try definition.read(bytes, at: &p, end: bytes.count) { FITDecoder.Damage(offset: $0, reason: $1) }
        #expect(p == bytes.count)
        #expect(message.integer(3) == 120 && message.fields[3] == .unsigned(120) && message.value(3) == 120)
        #expect(message.timestamp == 1_000_000_000 && message.date(253) == 1_000_000_000 + FITDecoder.epoch)
        #expect(message.integer(0) == -2 && message.value(7, scale: 10) == 30)
        #expect(message.integer(1) == nil && message.fields[1] == nil && message.value(1) == nil)
        #expect(message.integer(5) == nil)
        message.fields[3] = .unsigned(99)
        #expect(message.integer(3) == 99 && message.value(3) == 99)
    }

    static func close(_ value: Double?, _ expected: Any?, _ what: String, tolerance: Double = 1e-6) {
        guard let expected = expected as? Double ?? (expected as? Int).map(Double.init) else {
            #expect(value == nil, "\(what): \(String(describing: value)) where the SDK has none")
            return
        }
        #expect(value.map { abs($0 - expected) <= tolerance } == true, "\(what): \(String(describing: value)) against \(expected)")
    }
}
