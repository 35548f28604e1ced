import Foundation

/// A bounded queue of chunks from one producer thread to one consumer that pulls them: the zip's
/// inflation runs on its own core while the parser works, route files are parsed ahead of the
/// import, a rebuild's log is read and decoded while the read models apply it, and a study's
/// bundles are read and hashed ahead of the database. At most `capacity` chunks wait in memory.
/// `BatchWorker` is its other half: a consumer thread that works through what one producer
/// pushes; `GroupWorker` serves many producers. Their contract is tested in `HandOffTests`.
public final class ChunkPipe<Chunk>: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [Chunk] = []
    private var finished = false
    private var failure: Error?
    private var cancelled = false
    private let capacity: Int

    public init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// Producer: waits while the queue is full; throws once the consumer has given up.
    public func put(_ chunk: Chunk) throws {
        condition.lock()
        defer { condition.unlock() }
        while chunks.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw ChunkPipeCancelled() }
        chunks.append(chunk)
        condition.broadcast()
    }

    /// Producer: no more chunks, with the error that stopped it, if any.
    func finish(_ error: Error?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// Consumer: the next chunk, nil at the end; rethrows the producer's error.
    public func take() throws -> Chunk? {
        condition.lock()
        defer { condition.unlock() }
        while chunks.isEmpty && !finished { condition.wait() }
        if !chunks.isEmpty {
            condition.broadcast()
            return chunks.removeFirst()
        }
        if let failure, !(failure is ChunkPipeCancelled) { throw failure }
        return nil
    }

    /// Consumer: stop the producer and wait until it has.
    public func cancelAndDrain() {
        condition.lock()
        cancelled = true
        chunks.removeAll()
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// Runs `produce` on a new thread named `name`, feeding this pipe; the pipe is finished with
    /// the error `produce` throws, if any, when it returns.
    public func start(name: String = "chunk pipe", stackSize: Int = 1 << 20, _ produce: @escaping @Sendable (ChunkPipe) throws -> Void) {
        let thread = Thread { [self] in
            do {
                try produce(self)
                finish(nil)
            } catch {
                finish(error)
            }
        }
        thread.stackSize = stackSize
        thread.name = name
        thread.start()
    }
}

/// What `ChunkPipe.put` throws once the consumer has given up.
public struct ChunkPipeCancelled: Error {}
