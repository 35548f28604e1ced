import Foundation
import VaultEvents

/// Hands what a parser produces to another sink on a worker thread, in order, so that parsing
/// and the sink's work (identities, encoding, sealing frames) run on two cores.
///
/// Events, rejections and warnings travel in batches through a bounded queue (a few thousand
/// events in memory at most; a route, many points, travels in a batch of its own). The target is
/// only ever called from the worker, and `finish` waits for it, so nothing else may touch the
/// target until `finish` or `cancel` returns. An error the target throws stops the worker; the
/// parser gets it back from its next `add` that hands over a batch, or from `finish`.
public final class PipelinedSink: ImportSink, @unchecked Sendable {
    private enum Item {
        case event(VaultEvent, nested: Bool)
        case reject(Int)
        case warn(String)
    }

    private let batchSize: Int
    private var pending: [Item] = []
    private let worker: BatchWorker<[Item]>

    /// Starts the worker thread.
    ///
    /// - Parameters:
    ///   - batchSize: items handed over at a time.
    ///   - depth: batches that may wait for the worker before the parser waits.
    ///
    /// 2048 items in batches three deep (about 2 MB of samples in flight): with 512 two deep,
    /// the parser and the session each ran at ~60 % of a core, waking each other ~900 times a
    /// year of data; the year's import took 0.80 s against 0.74 s now (docs/benchmarks.md).
    public init(target: any ImportSink, batchSize: Int = 2048, depth: Int = 3) {
        self.batchSize = max(1, batchSize)
        worker = BatchWorker(name: "import session", depth: depth) { batch in
            // Each item is moved out of the batch, not copied (see `BatchWorker.init`).
            for index in batch.indices {
                var item = Item.reject(0)
                swap(&item, &batch[index])
                switch consume item {
                case .event(.sample(let sample), let nested): try target.add(sample: sample, nested: nested)
                case .event(let event, let nested): try target.add(event, nested: nested)
                case .reject(let count): target.reject(count)
                case .warn(let message): target.warn(message)
                }
            }
        }
    }

    public func add(_ event: VaultEvent, nested: Bool) throws {
        // A route holds hundreds to thousands of points: handed over at once, so that the few
        // batches waiting hold a few routes, not a few thousand.
        let heavy = if case .route = event { true } else { false }
        pending.append(.event(event, nested: nested))
        if pending.count >= batchSize || heavy { try handOver() }
    }

    public func reject(_ count: Int) { pending.append(.reject(count)) }

    public func warn(_ message: String) { pending.append(.warn(message)) }

    /// Hands over what is left, waits until the target took everything, and rethrows its error.
    public func finish() throws {
        try handOver()
        try worker.finish()
    }

    /// Drops what the worker has not taken yet and waits for it to stop.
    public func cancel() {
        pending = []
        worker.cancel()
    }

    private func handOver() throws {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending = []
        pending.reserveCapacity(batchSize)
        try worker.put(batch)
    }
}
