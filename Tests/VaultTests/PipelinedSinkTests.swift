import Foundation
import HealthModel
import Importers
import Testing
import VaultEvents

/// The parser-to-session pipeline: everything arrives, in order, on one other thread; the
/// target's error comes back to the parser; a cancel stops it.
@Suite struct PipelinedSinkTests {
    final class Recorder: ImportSink, @unchecked Sendable {
        var items: [String] = []
        var events = 0
        var failAt: Int?
        var threads = Set<String>()

        func add(_ event: VaultEvent, nested: Bool) throws {
            threads.insert("\(Thread.current)")
            if let failAt, events == failAt { throw CocoaError(.fileWriteOutOfSpace) }
            guard case .goalSet(let goal) = event else { return }
            items.append("event \(goal.value.mantissa) \(nested)")
            events += 1
        }
        func reject(_ count: Int) { items.append("reject \(count)") }
        func warn(_ message: String) { items.append("warn \(message)") }
    }

    static func event(_ i: Int) -> VaultEvent {
        .goalSet(GoalSetting(at: Date(timeIntervalSince1970: Double(i)), ring: .move, value: DecimalValue(mantissa: Int64(i), scale: 0),
                             from: LocalDay(year: 2024, month: 1, day: 1)))
    }

    @Test func everythingArrivesInOrderOnOneOtherThread() throws {
        let recorder = Recorder()
        let pipeline = PipelinedSink(target: recorder, batchSize: 7, depth: 2)
        var expected: [String] = []
        for i in 0..<1_000 {
            try pipeline.add(Self.event(i), nested: i % 3 == 0)
            expected.append("event \(i) \(i % 3 == 0)")
            if i % 100 == 0 {
                pipeline.reject(i)
                expected.append("reject \(i)")
            }
        }
        pipeline.warn("done")
        expected.append("warn done")
        try pipeline.finish()
        #expect(recorder.items.count == expected.count)
        #expect(recorder.items.elementsEqual(expected), "first difference: \(zip(recorder.items, expected).first { $0 != $1 }.map { "\($0)" } ?? "none")")
        #expect(recorder.threads.count == 1 && !recorder.threads.contains("\(Thread.current)"))
    }

    @Test func theTargetsErrorComesBackAndNothingAfterItIsTaken() throws {
        let recorder = Recorder()
        recorder.failAt = 50
        let pipeline = PipelinedSink(target: recorder, batchSize: 8, depth: 2)
        var thrownWhileAdding = false
        do {
            for i in 0..<10_000 { try pipeline.add(Self.event(i), nested: false) }
        } catch let error as CocoaError {
            #expect(error.code == .fileWriteOutOfSpace)
            thrownWhileAdding = true
        }
        #expect(thrownWhileAdding)
        #expect(throws: CocoaError.self) { try pipeline.finish() }
        #expect(recorder.items.count == 50)
    }

    @Test func aCancelStopsTheWorker() throws {
        let recorder = Recorder()
        let pipeline = PipelinedSink(target: recorder, batchSize: 4, depth: 1)
        for i in 0..<3 { try pipeline.add(Self.event(i), nested: false) }
        pipeline.cancel()
        #expect(recorder.items.isEmpty)
    }
}
