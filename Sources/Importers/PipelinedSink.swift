import Foundation
import HandOff
import HealthModel
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
        case perform(() throws -> Void)
    }

    /// One hand-over: the samples (nearly everything) in a buffer that moves them in and out
    /// without a copy, and the rest in order, each with how many samples came before it.
    private struct Batch {
        var samples: SampleBuffer
        var others: [(samplesBefore: Int, item: Item)] = []

        var count: Int { samples.count + others.count }
    }

    private let batchSize: Int
    /// The batch being filled: the parser's thread's alone (the worker gets it whole), so its
    /// accesses are not checked at run time, once or more a sample.
    @exclusivity(unchecked) private var pending: Batch
    private let worker: BatchWorker<Batch>

    /// How many batches wait for the worker (for tests that watch a cancel drop them).
    var waitingBatches: Int { worker.waitingBatches }

    /// Starts the worker thread.
    ///
    /// - Parameters:
    ///   - batchSize: items handed over at a time.
    ///   - depth: batches that may wait for the worker before the parser waits.
    ///
    /// 2048 items in batches three deep (about 2 MB of samples in flight): with 512 two deep,
    /// the parser and the session each ran at ~60 % of a core, waking each other ~900 times a
    /// year of data; the year's import took 0.80 s against 0.74 s now (docs/benchmarks-history.md).
    public init(target: any ImportSink, batchSize: Int = 2048, depth: Int = 3) {
        self.batchSize = max(1, batchSize)
        pending = Batch(samples: SampleBuffer(capacity: self.batchSize))
        worker = BatchWorker(name: "import session", depth: depth) { batch in
            // Samples are moved out of the batch, not copied: a copy would retain each string on
            // this thread while the parser's thread retains the same pooled strings.
            func deliverSamples(upTo end: Int) throws {
                while batch.samples.taken < end {
                    let nested = batch.samples.nextIsNested
                    try target.add(sample: batch.samples.takeNext(), nested: nested)
                }
            }
            for index in batch.others.indices {
                try deliverSamples(upTo: batch.others[index].samplesBefore)
                switch batch.others[index].item {
                case .event(let event, let nested): try target.add(event, nested: nested)
                case .reject(let count): target.reject(count)
                case .warn(let message): target.warn(message)
                case .perform(let body): try body()
                }
            }
            try deliverSamples(upTo: batch.samples.count)
        }
    }

    public func add(sample: consuming HealthSample, nested: Bool) throws {
        pending.samples.append(sample, nested: nested)
        if pending.count >= batchSize { try handOver() }
    }

    public func add(_ event: VaultEvent, nested: Bool) throws {
        if case .sample(let sample) = event { return try add(sample: sample, nested: nested) }
        // A route holds hundreds to thousands of points: handed over at once, so that the few
        // batches waiting hold a few routes, not a few thousand.
        let heavy = if case .route = event { true } else { false }
        pending.others.append((pending.samples.count, .event(event, nested: nested)))
        if pending.count >= batchSize || heavy { try handOver() }
    }

    public func reject(_ count: Int) { pending.others.append((pending.samples.count, .reject(count))) }

    public func warn(_ message: String) { pending.others.append((pending.samples.count, .warn(message))) }

    /// Runs `body` on the worker after everything handed over before it and before everything
    /// after: what ends one file and starts the next touches the target there, while this thread
    /// goes on parsing the next file. An error it throws stops the worker, as the target's do.
    public func perform(_ body: @escaping () throws -> Void) {
        pending.others.append((pending.samples.count, .perform(body)))
    }

    /// What stopped the worker, if anything has: of data handed over earlier than anything this
    /// thread failed on since.
    public var workerFailure: Error? { worker.failed }

    /// Hands over what is left, waits until the target took everything, and rethrows its error.
    public func finish() throws {
        try handOver()
        try worker.finish()
    }

    /// Drops what the worker has not taken yet and waits for it to stop.
    public func cancel() {
        pending = Batch(samples: SampleBuffer(capacity: batchSize))
        worker.cancel()
    }

    private func handOver() throws {
        guard pending.count > 0 else { return }
        var batch = Batch(samples: SampleBuffer(capacity: batchSize))
        swap(&batch, &pending)
        try worker.put(batch)
    }
}

/// A batch's samples, moved in and out in order (`MovingBuffer`), and whether each was nested in
/// a correlation.
private final class SampleBuffer {
    private let samples: MovingBuffer<HealthSample>
    private let nested: UnsafeMutablePointer<Bool>

    init(capacity: Int) {
        samples = MovingBuffer(capacity: capacity)
        nested = .allocate(capacity: capacity)
    }

    deinit { nested.deallocate() }

    var count: Int { samples.count }
    var taken: Int { samples.taken }

    /// Moves `sample` in (the buffer must not be full).
    func append(_ sample: consuming HealthSample, nested isNested: Bool) {
        samples.append(sample)
        nested[samples.count - 1] = isNested
    }

    /// Whether the sample `takeNext` returns next was nested in a correlation.
    var nextIsNested: Bool { nested[samples.taken] }

    /// Moves the next sample out (there must be one).
    func takeNext() -> HealthSample { samples.takeNext() }
}
