import Foundation
import HandOff
import Testing

/// The hand-offs every threaded stage uses, and their contract: `ChunkPipe` (a producer thread, a
/// consumer that pulls: the zip's inflation, route files, a rebuild's log reader, a study's
/// bundle reader and file hashes), `BatchWorker` (a producer that pushes, a worker thread: the
/// import session, the read models' feed) and `GroupWorker` (many producers, one thread taking
/// all that waits: the companion server's commits). Order kept, memory bounded, the producer's
/// or the worker's error handed on, and a cancel that stops the other side and waits for it.
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

    /// What a `GroupWorker`'s thread was handed, group by group.
    private final class Groups: @unchecked Sendable {
        private var groups: [[Int]] = []
        private let lock = NSLock()
        var value: [[Int]] { lock.withLock { groups } }
        func add(_ group: [Int]) { lock.withLock { groups.append(group) } }
    }

    /// A worker whose first group waits until `release` is signalled; `started` says it is in hand.
    private func blockedWorker(capacity: Int, maxBatch: Int) -> (GroupWorker<Int>, Groups, DispatchSemaphore, DispatchSemaphore) {
        let groups = Groups(), started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let worker = GroupWorker<Int>(name: "test group worker", capacity: capacity, maxBatch: maxBatch) { group in
            if group.first == 0 {
                started.signal()
                release.wait()
            }
            groups.add(group)
        }
        return (worker, groups, started, release)
    }

    @Test func aGroupWorkerTakesAllThatWaitedWhileItWorkedAsOneGroupInOrder() {
        let (worker, groups, started, release) = blockedWorker(capacity: 100, maxBatch: 4)
        #expect(worker.submit(0) == .queued)
        #expect(started.wait(timeout: .now() + 5) == .success)
        for i in 1...10 { #expect(worker.submit(i) == .queued) }
        release.signal()
        worker.stopAndWait()
        // At most `maxBatch` a group: the ten that waited go as four, four and two.
        #expect(groups.value == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]])
    }

    @Test func aGroupWorkerRefusesPastItsCapacityAndOnceStoppedButFinishesWhatWaits() {
        let (worker, groups, started, release) = blockedWorker(capacity: 3, maxBatch: 10)
        #expect(worker.submit(0) == .queued)
        #expect(started.wait(timeout: .now() + 5) == .success)
        #expect([1, 2, 3].map { worker.submit($0) } == [.queued, .queued, .queued])
        #expect(worker.submit(4) == .full)
        worker.stop()
        #expect(worker.submit(5) == .stopped)
        release.signal()
        worker.stopAndWait()
        #expect(groups.value == [[0], [1, 2, 3]])
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

/// Elements moved through a `MovingBuffer` are neither copied nor lost.
@Suite struct MovingBufferTests {
    /// Counts the instances alive.
    private final class Tracked {
        nonisolated(unsafe) static var alive = 0
        let value: Int
        init(_ value: Int) { self.value = value; Self.alive += 1 }
        deinit { Self.alive -= 1 }
    }

    @Test func elementsComeOutInOrderAndWhatIsNotTakenIsDestroyed() {
        let buffer = MovingBuffer<Tracked>(capacity: 4)
        for i in 0..<4 { buffer.append(Tracked(i)) }
        #expect(buffer.isFull && Tracked.alive == 4)
        var first = buffer.takeNext()
        let second = buffer.takeNext()
        #expect(first.value == 0 && second.value == 1)
        #expect(isKnownUniquelyReferenced(&first))  // moved out: the buffer keeps no reference
        #expect(buffer.taken == 2 && buffer.count == 4)
        buffer.removeAll()
        #expect(Tracked.alive == 2)  // the two taken, held here; the two left were destroyed
        #expect(buffer.count == 0 && buffer.taken == 0 && !buffer.isFull)
        buffer.append(Tracked(7))
        #expect(buffer.takeNext().value == 7)
        _ = (first, second)
    }
}
