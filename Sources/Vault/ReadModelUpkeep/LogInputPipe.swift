import EventLog
import Foundation
import Projections
import VaultEvents

/// The read models' inputs from a stretch of the log, decoded on a thread of their own while the
/// caller applies them: a rebuild's (or a long catch-up's) two halves, decrypting and decoding
/// the log and the read models' SQL, on the machine's two cores. Inputs travel in log order, in
/// chunks through a bounded queue (`depth` chunks of `chunkSize` at most wait).
///
/// The producer is the only one to touch what it reads (the log, its decoders) until `close`
/// returns; the caller's side touches only the read models.
final class LogInputPipe: @unchecked Sendable {
    static let chunkSize = 4096
    private static let depth = 3

    private let condition = NSCondition()
    private var chunks: [[ProjectionInput]] = []
    private var outcome: Result<LogPosition, Error>?
    private var closed = false
    private var running = true

    /// What stopped a producer whose consumer gave up.
    struct Closed: Error {}

    /// Starts `produce` on a new thread. It hands chunks over with the function it is given
    /// (which waits while the queue is full, and throws `Closed` once the consumer gave up) and
    /// returns the position it read up to.
    init(_ produce: @escaping @Sendable (_ put: ([ProjectionInput]) throws -> Void) throws -> LogPosition) {
        let thread = Thread { [self] in
            let result = Result { try produce { chunk in try self.put(chunk) } }
            condition.lock()
            outcome = result
            running = false
            condition.broadcast()
            condition.unlock()
        }
        thread.stackSize = 8 << 20
        thread.name = "read-model inputs"
        thread.start()
    }

    /// The next chunk in log order; nil once the producer read to its end. Rethrows what stopped it.
    func next() throws -> [ProjectionInput]? {
        condition.lock()
        defer { condition.unlock() }
        while chunks.isEmpty, running { condition.wait() }
        if !chunks.isEmpty {
            condition.broadcast()
            return chunks.removeFirst()
        }
        _ = try outcome!.get()
        return nil
    }

    /// The position the producer read up to, once `next` returned nil.
    func position() throws -> LogPosition {
        condition.lock()
        defer { condition.unlock() }
        while running { condition.wait() }
        return try outcome!.get()
    }

    /// Stops the producer (if it is still reading) and waits for its thread to end.
    func close() {
        condition.lock()
        closed = true
        chunks = []
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func put(_ chunk: [ProjectionInput]) throws {
        condition.lock()
        defer { condition.unlock() }
        while chunks.count >= Self.depth, !closed { condition.wait() }
        if closed { throw Closed() }
        chunks.append(chunk)
        condition.broadcast()
    }
}

/// A value handed to another thread that the handing side promises not to touch meanwhile.
struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
}

extension Vault {
    /// Applies the read-model inputs of the events `scan` reads to `apply`, the scan running on a
    /// second thread (`LogInputPipe`). Returns the position read up to and the inputs applied.
    ///
    /// Samples, nearly every event, are read by their heads (`EventDecoder.sampleHead`); the
    /// rest are decoded whole.
    func applyInputs(scan: @escaping (_ body: (EventDecoder, UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> LogPosition,
                     _ apply: (ProjectionInput) throws -> Void) throws -> (position: LogPosition, inputs: Int) {
        let scanner = HandedOver(value: scan)
        let pipe = LogInputPipe { put in
            var feed = ProjectionFeed()
            var chunk: [ProjectionInput] = []
            chunk.reserveCapacity(LogInputPipe.chunkSize)
            let position = try scanner.value { decoder, index, bytes in
                let input: ProjectionInput?
                if let head = try decoder.sampleHead(bytes, index: index) {
                    input = feed.input(for: head, of: decoder)
                } else if let event = try decoder.decode(bytes, index: index) {
                    input = feed.input(for: event)
                } else {
                    return
                }
                guard let input else { return }
                chunk.append(input)
                if chunk.count == LogInputPipe.chunkSize {
                    try put(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            if !chunk.isEmpty { try put(chunk) }
            return position
        }
        defer { pipe.close() }
        var inputs = 0
        while var chunk = try pipe.next() {
            inputs += chunk.count
            for index in chunk.indices { try apply(chunk.takeInput(at: index)) }
        }
        return (try pipe.position(), inputs)
    }
}

extension Array where Element == ProjectionInput {
    /// The input at `index`, moved out and not copied, a payload-free input left in its place: a
    /// copy would retain the strings of each input on the applying thread while the thread that
    /// made them retains the same ones for the next inputs.
    @inline(__always)
    mutating func takeInput(at index: Int) -> ProjectionInput {
        var input = ProjectionInput.standHour(start: 0, utcOffset: 0, stood: false)
        swap(&input, &self[index])
        return input
    }
}
