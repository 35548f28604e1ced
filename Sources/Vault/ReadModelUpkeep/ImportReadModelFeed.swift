import HealthModel
import Importers
import Projections
import VaultEvents

/// The read models' inputs of the events an import session appends, applied into a read-model
/// transaction the import opened: the events are in hand, so nothing is read back from the log
/// after the commit (docs/projections.md, "An import feeds the read models").
///
/// The session maps each event it appends to its input on its own thread; a thread of this
/// feed applies them, in order, in chunks through a bounded queue, so that the parser, the
/// session and the read models' SQL share the machine's cores. `finish` waits for the last one.
///
/// The transaction commits, with the log position the import's commit reached, only after the
/// log's commit; a crash or failure in between leaves the read models at their old position, and
/// the next command catches them up from the log as before. Some appends carry bytes the session
/// has no event for (identities set aside outside memory, values the upsert rule decides at the
/// commit): the feed is then `incomplete`, its transaction is rolled back, and the read models
/// catch up from the log instead.
final class ImportReadModelFeed {
    private static let chunkSize = 4096
    private static let depth = 4
    private static let flushThreshold = 65_536

    /// The mapping and the chunk being filled, in one stored value: an event costs one access to
    /// it (checked for exclusivity at run time, since the mapping hashes), not one per property.
    private var gathering = Gathering()
    private let worker: BatchWorker<[ProjectionInput]>
    /// Whether an event reached the log without passing here.
    private(set) var incomplete = false

    /// The feed missed an event, or applying one failed: its transaction is rolled back.
    struct Abandoned: Error {}

    /// Starts the applying thread. `update` must stay valid, and untouched by anyone else, until
    /// `finish` or `close` returns.
    init(update: UnsafeMutablePointer<ProjectionUpdate>) {
        // Merged as the import goes, so that little is left for after its last event.
        update.pointee.flushThreshold = Self.flushThreshold
        let target = HandedOver(value: update)
        worker = BatchWorker(name: "read-model feed", depth: Self.depth) { inputs in
            for index in inputs.indices { try target.value.pointee.add(inputs.takeInput(at: index)) }
        }
    }

    /// Takes what `event`, just appended to the log, brings the read models (on the session's
    /// thread; waits while the applying thread is `depth` chunks behind).
    func appended(_ event: VaultEvent) {
        guard !incomplete else { return }
        if let full = gathering.take(event: event) { handOver(full) }
    }

    /// `appended(.sample(sample))`, without going through the event.
    func appended(sample: HealthSample) {
        guard !incomplete else { return }
        if let full = gathering.take(sample: sample) { handOver(full) }
    }

    /// Something reached the log without its event: the read models catch up from the log.
    func missedAnEvent() {
        incomplete = true
        gathering.chunk = []
    }

    /// Waits until every input is applied; throws `Abandoned` when the feed is incomplete or an
    /// input could not be applied (the read models then catch up from the log).
    func finish() throws {
        if !incomplete, !gathering.chunk.isEmpty { handOver(gathering.chunk) }
        do {
            try worker.finish()
        } catch {
            throw Abandoned()
        }
        if incomplete { throw Abandoned() }
    }

    /// Drops what is not applied yet and waits for the applying thread to end.
    func close() {
        worker.cancel()
    }

    private func handOver(_ full: [ProjectionInput]) {
        // After a failure the applying thread has stopped: what follows is dropped, and
        // `finish` reports it.
        try? worker.put(full)
    }

    /// Events mapped to inputs, gathered into chunks of `chunkSize`.
    private struct Gathering {
        var feed = ProjectionFeed()
        var chunk: [ProjectionInput] = []

        init() { chunk.reserveCapacity(ImportReadModelFeed.chunkSize) }

        mutating func take(event: VaultEvent) -> [ProjectionInput]? {
            guard let input = feed.input(for: event) else { return nil }
            return gather(input)
        }

        mutating func take(sample: HealthSample) -> [ProjectionInput]? {
            guard let input = feed.input(for: sample) else { return nil }
            return gather(input)
        }

        /// Adds `input`; returns the chunk when it is full, and begins the next. The input is
        /// moved in: an optional parameter was copied into the chunk and destroyed (~300
        /// instructions a sample, measured).
        private mutating func gather(_ input: consuming ProjectionInput) -> [ProjectionInput]? {
            chunk.append(input)
            guard chunk.count == ImportReadModelFeed.chunkSize else { return nil }
            defer {
                chunk = []
                chunk.reserveCapacity(ImportReadModelFeed.chunkSize)
            }
            return chunk
        }
    }
}
