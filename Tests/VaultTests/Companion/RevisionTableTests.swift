import HealthModel
import Testing
@testable import Vault
import VaultEvents

/// The upsert rule's memory: past its budget the table keeps the newest samples (by start) and
/// reads a key again only for an older one; either way a value posted again replaces the live one.
@Suite struct RevisionTableTests {
    private static let base: Int64 = 1_717_200_000

    private func sample(minute: Int, value: Double, encoder: EventEncoder) -> [UInt8] {
        var bytes: [UInt8] = []
        let start = HealthTimestamp(seconds: Self.base + Int64(minute) * 60, utcOffset: 0)
        let end = HealthTimestamp(seconds: start.seconds + 60, utcOffset: 0)
        encoder.encode(sample: HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "phone"), start: start, end: end,
                                            value: .quantity(DecimalValue(double: value), unit: "count")), into: &bytes)
        _ = encoder.takeDefinitions()
        return bytes
    }

    @Test func pastItsBudgetTheNewestStayAndAnOlderSampleReadsTheKeyAgain() throws {
        var table = RevisionTable()
        table.committedBudget = 100
        let encoder = EventEncoder()
        // The key's committed samples: minutes 0..<3000, log index = minute.
        var log = (0..<3_000).map { sample(minute: $0, value: 10, encoder: encoder) }
        var reads = 0
        func readKey(_ key: UInt32, _ visit: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
            reads += 1
            for (index, bytes) in log.enumerated() { try bytes.withUnsafeBytes { try visit(UInt64(index), $0) } }
        }
        func commit() throws -> [[UInt8]] {
            let events = try table.takePending { _, index in log[Int(index)] }.map(\.event)
            for event in events {
                log.append(event)
                event.withUnsafeBytes { table.learn(keyID: 2, index: UInt64(log.count - 1), bytes: $0) }
            }
            table.endLearning()
            return events
        }
        #expect(try table.offer(sample(minute: 3_000, value: 10, encoder: encoder), keyID: 2, readKey: readKey) == .added)
        #expect(reads == 1)
        // The commit passes twice the budget: the older half goes.
        _ = try commit()
        // A recent minute posted again with a new value: decided from memory, a replacement.
        #expect(try table.offer(sample(minute: 2_900, value: 11, encoder: encoder), keyID: 2, readKey: readKey) == .replaced)
        #expect(reads == 1)
        // An old minute: the key is read again, and it is a replacement too, not a second live value.
        #expect(try table.offer(sample(minute: 10, value: 12, encoder: encoder), keyID: 2, readKey: readKey) == .replaced)
        #expect(reads == 2)
        let written = try commit()
        // Each replacement writes the supersession of the value it replaces, then the new value.
        #expect(written.map { event in event.withUnsafeBytes { EncodedEvent($0).knownKind } } == [.sampleSuperseded, .sample, .sampleSuperseded, .sample])
        // The same old value again is a duplicate.
        #expect(try table.offer(sample(minute: 10, value: 12, encoder: encoder), keyID: 2, readKey: readKey) == .duplicate)
    }
}
