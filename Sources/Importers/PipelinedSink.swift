import Foundation
import VaultEvents

/// Hands what a parser produces to another sink on a worker thread, in order, so that parsing
/// and the sink's work (identities, encoding, sealing frames) run on two cores.
///
/// Events, rejections and warnings travel in batches through a bounded queue (a few thousand
/// events in memory at most). The target is only ever called from the worker, and `finish` waits
/// for it, so nothing else may touch the target until `finish` or `cancel` returns. An error the
/// target throws stops the worker; the parser gets it back from its next `add` that hands over a
/// batch, or from `finish`.
public final class PipelinedSink: ImportSink, @unchecked Sendable {
    private enum Item {
        case event(VaultEvent, nested: Bool)
        case reject(Int)
        case warn(String)
    }

    private let target: any ImportSink
    private let batchSize: Int
    private let depth: Int
    private var pending: [Item] = []
    private let condition = NSCondition()
    private var queue: [[Item]] = []
    private var ended = false
    private var running = false
    private var failure: Error?

    /// - Parameters:
    ///   - batchSize: items handed over at a time.
    ///   - depth: batches that may wait for the worker before the parser waits.
    public init(target: any ImportSink, batchSize: Int = 512, depth: Int = 2) {
        self.target = target
        self.batchSize = max(1, batchSize)
        self.depth = max(1, depth)
    }

    /// Starts the worker thread.
    public func start() {
        running = true
        let thread = Thread { [self] in work() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    public func add(_ event: VaultEvent, nested: Bool) throws {
        pending.append(.event(event, nested: nested))
        if pending.count >= batchSize { try handOver() }
    }

    public func reject(_ count: Int) { pending.append(.reject(count)) }

    public func warn(_ message: String) { pending.append(.warn(message)) }

    /// Hands over what is left, waits until the target took everything, and rethrows its error.
    public func finish() throws {
        try handOver()
        condition.lock()
        ended = true
        condition.broadcast()
        while running { condition.wait() }
        let error = failure
        condition.unlock()
        if let error { throw error }
    }

    /// Drops what the worker has not taken yet and waits for it to stop.
    public func cancel() {
        pending = []
        condition.lock()
        queue = []
        ended = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func handOver() throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= depth && failure == nil { condition.wait() }
        if let failure { throw failure }
        if !pending.isEmpty {
            queue.append(pending)
            pending = []
            pending.reserveCapacity(batchSize)
            condition.broadcast()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty && !ended { condition.wait() }
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
                // Each item is moved out of the batch, not copied: a copy would retain every
                // string of an event here while the parser's thread retains the same pooled
                // strings for the next records, and their counts would bounce between cores.
                for index in batch.indices {
                    var item = Item.reject(0)
                    swap(&item, &batch[index])
                    switch consume item {
                    case .event(let event, let nested): try target.add(event, nested: nested)
                    case .reject(let count): target.reject(count)
                    case .warn(let message): target.warn(message)
                    }
                }
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
