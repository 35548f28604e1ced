import HandOff
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
    private let worker: BatchWorker<Chunk>
    /// Whether an event reached the log without passing here.
    private(set) var incomplete = false
    /// Whether events set aside wait in `gathering.encoded`: a plain flag, so that a sample's
    /// `appended` asks it without a second access to `gathering` (checked at run time).
    private var holdsEncoded = false

    /// The feed missed an event, or applying one failed: its transaction is rolled back.
    struct Abandoned: Error {}

    /// What the applying thread takes: inputs the session mapped, or events set aside outside
    /// memory, as bytes with their key's decoder, which the applying thread reads (the session's
    /// thread is the busier one while the external deduplicator decides).
    private enum Chunk {
        case inputs([ProjectionInput])
        case encoded([(bytes: [UInt8], decoder: EventDecoder)])
    }

    /// Starts the applying thread. `update` must stay valid, and untouched by anyone else, until
    /// `finish` or `close` returns.
    init(update: UnsafeMutablePointer<ProjectionUpdate>) {
        // Merged as the import goes, so that little is left for after its last event.
        update.pointee.flushThreshold = Self.flushThreshold
        let target = HandedOver(value: update)
        // The applying thread's own mapping, for the events it reads (a mapping is one thread's).
        var reading = ProjectionFeed()
        worker = BatchWorker(name: "read-model feed", depth: Self.depth) { chunk in
            switch chunk {
            case .inputs(var inputs):
                chunk = .inputs([])
                for index in inputs.indices { try target.value.pointee.add(inputs.takeInput(at: index)) }
            case .encoded(let events):
                for (bytes, decoder) in events {
                    guard let input = try bytes.withUnsafeBytes({ try reading.input(encoded: $0, decoder: decoder) }) else { continue }
                    try target.value.pointee.add(input)
                }
            }
        }
    }

    /// Takes what `event`, just appended to the log, brings the read models (on the session's
    /// thread; waits while the applying thread is `depth` chunks behind).
    func appended(_ event: VaultEvent) {
        guard !incomplete else { return }
        if holdsEncoded { handOverEncoded() }
        if let full = gathering.take(event: event) { handOver(.inputs(full)) }
    }

    /// `appended(.sample(sample))`, without going through the event.
    func appended(sample: HealthSample) {
        guard !incomplete else { return }
        if holdsEncoded { handOverEncoded() }
        if let full = gathering.take(sample: sample) { handOver(.inputs(full)) }
    }

    /// `appended` for an event appended from its bytes alone (what the external deduplicator set
    /// aside outside memory), read on the applying thread with `decoder`, which knows its key's
    /// strings and sources and is left to that thread from now on. Bytes that do not decode
    /// stop the feed (`finish` throws: the read models catch up from the log).
    func appended(encoded bytes: [UInt8], decoder: EventDecoder) {
        guard !incomplete else { return }
        if !gathering.chunk.isEmpty { handOver(.inputs(gathering.takeChunk())) }
        gathering.encoded.append((bytes, decoder))
        holdsEncoded = true
        if gathering.encoded.count == Self.chunkSize { handOverEncoded() }
    }

    /// Something reached the log without its event: the read models catch up from the log.
    func missedAnEvent() {
        incomplete = true
        gathering.chunk = []
        gathering.encoded = []
        holdsEncoded = false
    }

    /// Waits until every input is applied; throws `Abandoned` when the feed is incomplete or an
    /// input could not be applied (the read models then catch up from the log).
    func finish() throws {
        if !incomplete {
            handOverEncoded()
            if !gathering.chunk.isEmpty { handOver(.inputs(gathering.takeChunk())) }
        }
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

    /// Hands over the events waiting as bytes, if any: they go before whatever follows them.
    private func handOverEncoded() {
        guard holdsEncoded else { return }
        holdsEncoded = false
        let events = gathering.encoded
        gathering.encoded = []
        handOver(.encoded(events))
    }

    private func handOver(_ chunk: Chunk) {
        // After a failure the applying thread has stopped: what follows is dropped, and
        // `finish` reports it.
        try? worker.put(chunk)
    }

    /// Events mapped to inputs, gathered into chunks of `chunkSize`.
    private struct Gathering {
        var feed = ProjectionFeed()
        var chunk: [ProjectionInput] = []
        /// Events set aside outside memory, as they come back decided.
        var encoded: [(bytes: [UInt8], decoder: EventDecoder)] = []

        init() { chunk.reserveCapacity(ImportReadModelFeed.chunkSize) }

        mutating func take(event: VaultEvent) -> [ProjectionInput]? {
            guard let input = feed.input(for: event) else { return nil }
            return gather(input)
        }

        mutating func take(sample: HealthSample) -> [ProjectionInput]? {
            guard let input = feed.input(for: sample) else { return nil }
            return gather(input)
        }

        /// The chunk so far, a new one begun.
        mutating func takeChunk() -> [ProjectionInput] {
            defer {
                chunk = []
                chunk.reserveCapacity(ImportReadModelFeed.chunkSize)
            }
            return chunk
        }

        /// Adds `input`; returns the chunk when it is full, and begins the next. The input is
        /// moved in: an optional parameter was copied into the chunk and destroyed (~300
        /// instructions a sample, measured).
        private mutating func gather(_ input: consuming ProjectionInput) -> [ProjectionInput]? {
            chunk.append(input)
            guard chunk.count == ImportReadModelFeed.chunkSize else { return nil }
            return takeChunk()
        }
    }
}

extension ProjectionFeed {
    /// The input of an event read from its bytes: a sample by its head, as a rebuild reads it;
    /// any other event decoded whole.
    mutating func input(encoded bytes: UnsafeRawBufferPointer, decoder: EventDecoder) throws -> ProjectionInput? {
        if let head = try decoder.sampleHead(bytes, index: 0) { return input(for: head, of: decoder) }
        guard let event = try decoder.decode(bytes, index: 0) else { return nil }
        return input(for: event)
    }
}
