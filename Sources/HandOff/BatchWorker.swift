import Foundation

/// Hands batches from the thread that makes them to a thread of its own that works through
/// them, in order, through a bounded queue: `put` waits while `depth` batches wait, so memory
/// stays bounded and the faster side waits for the slower. The import's parser hands its events
/// to the session this way (`PipelinedSink`), and the session the read models' inputs to their
/// writer (`ImportReadModelFeed`).
///
/// An error `body` throws stops the worker: batches waiting are dropped, the next `put` throws it
/// and so does `finish`. The worker is the only one to run `body`; what `body` touches must be left
/// alone until `finish` or `cancel` returns.
public final class BatchWorker<Batch>: @unchecked Sendable {
    private let depth: Int
    private let body: (inout Batch) throws -> Void
    private let condition = NSCondition()
    private var queue: [Batch] = []
    private var ended = false
    private var running = true
    private var failure: Error?

    /// Starts the worker thread, named `name`. `body` may move things out of the batch it gets
    /// (the batch is the worker's): a copy of an event would retain its strings on this thread
    /// while the other thread retains the same pooled strings, and their counts would bounce
    /// between the cores.
    public init(name: String, depth: Int, body: @escaping (inout Batch) throws -> Void) {
        self.depth = max(1, depth)
        self.body = body
        let thread = Thread { [self] in work() }
        thread.stackSize = 8 << 20
        thread.name = name
        thread.start()
    }

    /// How many batches wait for the worker (for tests that watch a cancel drop them).
    public var waitingBatches: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// What stopped the worker, if anything has.
    public var failed: Error? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    /// Queues `batch`, waiting while `depth` batches wait; throws what stopped the worker.
    public func put(_ batch: Batch) throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= depth, failure == nil, !ended { condition.wait() }
        if let failure { throw failure }
        queue.append(batch)
        condition.broadcast()
    }

    /// Waits until every batch is done; rethrows what stopped the worker.
    public func finish() throws {
        condition.lock()
        ended = true
        condition.broadcast()
        while running { condition.wait() }
        let error = failure
        condition.unlock()
        if let error { throw error }
    }

    /// Drops the batches not started and waits for the worker to stop.
    public func cancel() {
        condition.lock()
        queue = []
        ended = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty, !ended { condition.wait() }
            guard !queue.isEmpty, failure == nil else {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            var batch = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            do {
                try body(&batch)
            } catch {
                condition.lock()
                failure = error
                queue = []
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }
}
