import Foundation
@testable import Importers
import Testing

/// The two hand-offs every threaded stage uses, and their contract: `ChunkPipe` (a producer
/// thread, a consumer that pulls: the zip's inflation, route files, a rebuild's log reader) and
/// `BatchWorker` (a producer that pushes, a worker thread: the import session, the read models'
/// feed). Order kept, memory bounded, the producer's or the worker's error handed on, and a
/// cancel that stops the other side and waits for it.
@Suite struct HandOffTests {
    struct Stop: Error, Equatable { var at: Int }

    @Test func aPipeHandsChunksOnInOrderAndEndsWithTheProducersError() throws {
        let pipe = ChunkPipe<Int>(capacity: 2)
        pipe.start(name: "test producer") { pipe in
            for i in 0..<50 { try pipe.put(i) }
            throw Stop(at: 50)
        }
        var taken: [Int] = []
        let error = #expect(throws: Stop.self) { while let chunk = try pipe.take() { taken.append(chunk) } }
        #expect(taken == Array(0..<50))
        #expect(error == Stop(at: 50))
        // Ended: the pipe says so again, without waiting.
        #expect(throws: Stop.self) { _ = try pipe.take() }
    }

    @Test func aPipeHoldsAtMostItsCapacityAndACancelStopsTheProducer() throws {
        let pipe = ChunkPipe<Int>(capacity: 3)
        let put = Counter()
        let stopped = DispatchSemaphore(value: 0)
        let ending = Outcome()
        pipe.start { pipe in
            do {
                for i in 0..<1_000 { try pipe.put(i); put.add() }
            } catch {
                ending.set("\(type(of: error))")
                stopped.signal()
                throw error
            }
        }
        // Nobody takes: the producer waits with three chunks in the pipe.
        let deadline = Date().addingTimeInterval(5)
        while put.value < 3, Date() < deadline { usleep(1_000) }
        usleep(50_000)
        #expect(put.value == 3)
        #expect(try pipe.take() == 0)
        pipe.cancelAndDrain()
        #expect(stopped.wait(timeout: .now() + 5) == .success)
        #expect(ending.value == "ChunkPipeCancelled")
        #expect(put.value <= 4)
    }

    @Test func aWorkerTakesBatchesInOrderAndItsErrorReachesThePutAfterItAndFinish() throws {
        let seen = Counter()
        var order: [Int] = []
        let worker = BatchWorker<Int>(name: "test worker", depth: 2) { batch in
            if batch == 5 { throw Stop(at: 5) }
            order.append(batch)
            seen.add()
        }
        var putError: Error?
        for i in 0..<100 {
            do { try worker.put(i) } catch { putError = error; break }
        }
        #expect(putError as? Stop == Stop(at: 5))
        #expect(throws: Stop(at: 5)) { try worker.finish() }
        #expect(order == [0, 1, 2, 3, 4])
        #expect(worker.failed as? Stop == Stop(at: 5))
    }

    @Test func aWorkersCancelDropsTheWaitingBatchesAndWaitsForTheOneInHand() throws {
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let done = Counter()
        let worker = BatchWorker<Int>(name: "test worker", depth: 3) { batch in
            if batch == 0 {
                started.signal()
                release.wait()
            }
            done.add()
        }
        for i in 0..<4 { try worker.put(i) }   // one in hand, three waiting
        #expect(started.wait(timeout: .now() + 5) == .success)
        #expect(worker.waitingBatches == 3)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { release.signal() }
        worker.cancel()
        #expect(done.value == 1)
        #expect(worker.waitingBatches == 0)
        // Nothing more runs once cancelled; finish has nothing to report.
        try worker.finish()
        #expect(done.value == 1)
    }
}

/// A count two threads share.
private final class Counter: @unchecked Sendable {
    private var count = 0
    private let lock = NSLock()
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}

/// A text one thread sets and another reads.
private final class Outcome: @unchecked Sendable {
    private var text = ""
    private let lock = NSLock()
    var value: String { lock.withLock { text } }
    func set(_ new: String) { lock.withLock { text = new } }
}
