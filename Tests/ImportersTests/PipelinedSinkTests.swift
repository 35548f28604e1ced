import Foundation
import HealthModel
@testable import Importers
import Testing
import VaultEvents

/// The parser-to-session pipeline: everything arrives, in order, on one other thread; the
/// target's error comes back to the parser; a cancel stops it.
@Suite struct PipelinedSinkTests {
    final class Recorder: ImportSink, @unchecked Sendable {
        var items: [String] = []
        var events = 0
        var failAt: Int?
        /// The threads `add` ran on, by `pthread_self` (both threads live while compared; a
        /// thread's description could repeat another's).
        var threads = Set<UInt>()
        /// When set, the first event signals `entered` and waits for `gate`.
        var gate: (entered: DispatchSemaphore, open: DispatchSemaphore)?

        func add(_ event: VaultEvent, nested: Bool) throws {
            threads.insert(UInt(pthread_self()))
            if let gate, events == 0 {
                gate.entered.signal()
                gate.open.wait()
            }
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
        #expect(recorder.threads.count == 1 && !recorder.threads.contains(UInt(pthread_self())))
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
        #expect { try pipeline.finish() } throws: { ($0 as? CocoaError)?.code == .fileWriteOutOfSpace }
        #expect(recorder.items.count == 50)
    }

    /// A cancel lets the batch the worker is in finish, drops the batch waiting for it and what
    /// the parser had not handed over yet, and returns once the worker stopped. The worker is held
    /// at the first event until the cancel has emptied the queue (both seen, not timed).
    @Test func aCancelStopsTheWorker() throws {
        let recorder = Recorder()
        let gate = (entered: DispatchSemaphore(value: 0), open: DispatchSemaphore(value: 0))
        recorder.gate = gate
        let pipeline = PipelinedSink(target: recorder, batchSize: 4, depth: 1)
        for i in 0..<4 { try pipeline.add(Self.event(i), nested: false) }   // the first batch: the worker takes it
        #expect(gate.entered.wait(timeout: .now() + 120) == .success)
        for i in 4..<8 { try pipeline.add(Self.event(i), nested: false) }   // the second: it waits
        for i in 8..<10 { try pipeline.add(Self.event(i), nested: false) }  // not handed over yet
        #expect(pipeline.waitingBatches == 1)
        let cancelled = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            pipeline.cancel()
            cancelled.signal()
        }
        let emptied = Date().addingTimeInterval(120)
        while pipeline.waitingBatches > 0 && Date() < emptied { usleep(1_000) }
        #expect(pipeline.waitingBatches == 0)
        // The cancel waits for the worker, which is still held in the first batch.
        #expect(cancelled.wait(timeout: .now()) == .timedOut)
        gate.open.signal()
        #expect(cancelled.wait(timeout: .now() + 120) == .success)
        #expect(recorder.items == (0..<4).map { "event \($0) false" })
    }
}
