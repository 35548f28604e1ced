import Foundation
import HealthModel
import SecureMemory
import Testing
import TestSupport
@testable import Projections

/// Feeding in many small updates, or through a reopened encrypted file, gives what one update gives.
@Suite struct IncrementalTests {
    static func randomInputs(count: Int, seed: UInt64) -> [ProjectionInput] {
        var rng = SeededRandom(seed: seed)
        let sources = [Build.watch, Build.phone, SourceKey(name: "Strava", deviceClass: .other)]
        var result: [ProjectionInput] = []
        for i in 0..<count {
            let day = LocalDay(dayNumber: d0.dayNumber + Int64(rng.next() % 20))
            let offset = Int32([0, 2, -4][Int(rng.next() % 3)])
            let start = Build.instant(day, Int(rng.next() % 24), Int(rng.next() % 60), offset: offset)
            let length = Int64(60 + rng.next() % 3000)
            switch rng.next() % 10 {
            case 0:
                result.append(.standHour(start: start - start % 3600, utcOffset: offset * 3600, stood: rng.next() % 3 != 0))
            case 1:
                result.append(.discrete(DiscreteSample(metric: Build.heartRate, unit: "count/min", start: start, utcOffset: offset * 3600, value: Double(50 + rng.next() % 100))))
            case 2:
                result.append(.cumulative(CumulativeSample(metric: RingMetrics.activeEnergy, unit: "kcal", source: sources[i % 3],
                                                           start: start, end: start + length, utcOffset: offset * 3600, value: Double(rng.next() % 5000) / 10)))
            case 3 where i % 50 == 0:
                result.append(.goalSet(ring: Ring.allCases[Int(rng.next() % 3)], value: Double(10 + rng.next() % 500), from: day))
            case 4 where i % 23 == 0:
                result.append(.sourceOrder(rng.next() % 2 == 0 ? [sources[2], sources[1]] : []))
            case 6 where i % 2 == 0:
                result.append(.cumulative(CumulativeSample(metric: RingMetrics.exerciseTime, unit: "min", source: sources[Int(rng.next() % 3)],
                                                           start: start, end: start + length, utcOffset: offset * 3600, value: Double(length / 60))))
            case 5 where i % 40 == 0:
                result.append(.appleRings(AppleRings(day: day, move: 400, moveGoal: Double(300 + rng.next() % 400), exercise: 30, exerciseGoal: 30, stand: 10, standGoal: 12)))
            case 7 where i % 3 == 0:
                // An app's rewrite of the last sample (its content, another creation date), or a
                // heart-rate reading with metadata.
                if case .cumulative(var copy)? = result.last {
                    copy.created = (copy.created ?? copy.end) + 1 + Int64(rng.next() % 5)
                    result.append(.cumulative(copy))
                } else {
                    let entry = MetadataEntry(key: "HKMetadataKeyHeartRateMotionContext", value: "\(rng.next() % 3)")
                    result.append(.annotated(.discrete(DiscreteSample(metric: Build.heartRate, unit: "count/min", start: start, utcOffset: offset * 3600,
                                                                      value: Double(50 + rng.next() % 100))),
                                             RecordMetadata(type: Build.heartRate, category: .heart, day: day, entries: [entry])))
                }
            default:
                let digest: UInt32 = [0, 0, 7, 9][Int(rng.next() % 4)]
                result.append(.cumulative(CumulativeSample(metric: Build.steps, unit: "count", source: sources[Int(rng.next() % 3)],
                                                           start: start, end: start + length, utcOffset: offset * 3600, value: Double(rng.next() % 2000),
                                                           metadataDigest: digest, created: rng.next() % 2 == 0 ? nil : start + length + 60)))
            }
        }
        return result
    }

    static func everything(_ models: ReadModels) throws -> [String] {
        try readModelAnswers(models, metrics: [Build.steps, Build.heartRate, RingMetrics.activeEnergy])
    }

    /// Seeds 4 and 5 have no source-order changes, so every update recomputes only the rings
    /// of the days whose values changed, and from its earliest changed goal on.
    @Test(arguments: [1 as UInt64, 2, 3, 4, 5])
    func manySmallUpdatesEqualOneBigOne(seed: UInt64) throws {
        let inputs = Self.randomInputs(count: 3_000, seed: seed).filter { input in
            if seed >= 4, case .sourceOrder = input { return false }
            return true
        }
        let whole = try ReadModels()
        try whole.feed(inputs)
        let directory = TemporaryDirectory()
        let key = SecretKey.random()
        var pieces = try ReadModels(path: directory.file("models.db"), key: key)
        var index = 0
        var rng = SeededRandom(seed: seed &+ 100)
        var round = 0
        while index < inputs.count {
            let n = min(inputs.count - index, 1 + Int(rng.next() % 400))
            try pieces.feed(Array(inputs[index..<index + n]), position: [UInt8(round % 256)])
            index += n
            round += 1
            // Every few updates, reopen the file as the next command does.
            if round % 3 == 0 {
                pieces = try ReadModels(path: directory.file("models.db"), key: key)
            }
        }
        #expect(firstDifference(try Self.everything(pieces), try Self.everything(whole)) == nil)
        // Every table as verify compares them (record_metadata among them).
        let a = try pieces.canonicalContents(), b = try whole.canonicalContents()
        #expect(a.keys.sorted() == b.keys.sorted())
        for table in a.keys.sorted() {
            let same = a[table] == b[table]
            #expect(same, "table \(table) differs")
        }
        #expect(try pieces.position == [UInt8((round - 1) % 256)])
    }

    /// Update by update, against figures worked out by hand (not against a rebuild): the Watch's
    /// 600 steps over 08:00–09:00, the phone's 900 over 08:30–09:30 fill only the half hour the
    /// Watch missed (450), the phone put first takes the overlap back, a move goal set later in
    /// the day's life closes a ring that was open.
    @Test func eachUpdateGivesTheFiguresWorkedOutByHand() throws {
        let directory = TemporaryDirectory()
        let key = SecretKey.random()
        func models() throws -> ReadModels { try ReadModels(path: directory.file("models.db"), key: key) }
        let eight = Build.instant(d0, 8), halfPast = Build.instant(d0, 8, 30)
        try models().feed([Build.sample(source: Build.watch, start: eight, end: eight + 3600, offset: 0, value: 600)], position: [1])
        #expect(try models().dayTotals() == [d0.description: 600])
        try models().feed([Build.sample(source: Build.phone, start: halfPast, end: halfPast + 3600, offset: 0, value: 900)], position: [2])
        #expect(try models().dayTotals() == [d0.description: 600 + 450])
        try models().feed([.sourceOrder([Build.phone])], position: [3])
        #expect(try models().dayTotals() == [d0.description: 900 + 300])
        let energy = CumulativeSample(metric: RingMetrics.activeEnergy, unit: "kcal", source: Build.watch, start: eight, end: eight + 1800,
                                      utcOffset: 0, value: 310)
        try models().feed([.cumulative(energy)], position: [4])
        var ring = try #require(try models().rings().first)
        #expect(ring.day == d0 && ring.move == 310 && ring.moveGoal == 400 && !ring.closed(.move))
        try models().feed([.goalSet(ring: .move, value: 300, from: d0)], position: [5])
        ring = try #require(try models().rings().first)
        #expect(ring.move == 310 && ring.moveGoal == 300 && ring.closed(.move))
        try models().feed([.sourceOrder([])], position: [6])
        #expect(try models().dayTotals() == [d0.description: 1_050])
    }

    @Test func aFailedUpdateLeavesNothingBehind() throws {
        let models = try ReadModels()
        try models.feed(Self.randomInputs(count: 200, seed: 9), position: [7])
        let before = try Self.everything(models)
        struct Interrupted: Error {}
        #expect(throws: Interrupted.self) {
            try models.update { update in
                for input in Self.randomInputs(count: 200, seed: 10) { try update.add(input) }
                throw Interrupted()
            }
        }
        #expect(try Self.everything(models) == before)
        #expect(try models.position == [7])
    }

    @Test func aDamagedForeignOrWrongKeyFileIsRefusedAsDamage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("models.db")
        let key = SecretKey.random()
        do { try ReadModels(path: path, key: key).feed(Self.randomInputs(count: 300, seed: 4)) }
        let pristine = try Data(contentsOf: URL(fileURLWithPath: path))
        func refused(_ bytes: Data, key: SecretKey = key) throws -> Bool {
            try bytes.write(to: URL(fileURLWithPath: path))
            do {
                let models = try ReadModels(path: path, key: key)
                _ = try models.query("SELECT COUNT(*) FROM day_intervals")
                return false
            } catch let error as any StoredDataError {
                return error.isDamage
            }
        }
        #expect(try !refused(pristine))
        var flipped = pristine
        flipped[64 + 4 + 24 + 100] ^= 0x04  // a bit of the first page's ciphertext
        #expect(try refused(flipped))
        #expect(try refused(pristine, key: SecretKey.random()))
        var unknownHeader = pristine
        unknownHeader[0] = UInt8(ascii: "X")
        #expect(try refused(unknownHeader))
        // Two blocks swapped: each authenticates only at its own number.
        let block = 4096 + 44
        var swapped = pristine
        swapped.replaceSubrange(64..<(64 + block), with: pristine[(64 + block)..<(64 + 2 * block)])
        swapped.replaceSubrange((64 + block)..<(64 + 2 * block), with: pristine[64..<(64 + block)])
        #expect(try refused(swapped))
    }

    @Test func sqlRunsOneReadOnlyStatement() throws {
        let models = try ReadModels()
        try models.feed(Self.randomInputs(count: 100, seed: 5))
        let result = try models.query("SELECT COUNT(*) AS n FROM daily_summary")
        #expect(result.columns == ["n"] && result.rows.count == 1)
        for refused in ["DELETE FROM daily", "SELECT 1; DELETE FROM daily", "ATTACH '/tmp/x.db' AS x",
                        "VACUUM INTO '/tmp/x.db'", "PRAGMA user_version = 3", "CREATE TABLE t(x)"] {
            #expect { try models.query(refused) } throws: { ($0 as? ProjectionError) == (refused.contains(";") ? .multipleStatements : .notReadOnly) }
        }
        #expect(try models.query("SELECT 2 -- trailing comment").rows == [[.integer(2)]])
    }
}
