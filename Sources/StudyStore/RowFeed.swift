import Foundation
import HandOff

/// A bundle's rows a batch at a time, with the place reached in the current batch, so a COPY
/// that pauses mid-batch (to make a partition, or to send staged rows) resumes where it stopped.
///
/// With `readAhead`, the rows are read (decrypted, checked, parsed) on a thread of their own up
/// to `depth` batches ahead (a `ChunkPipe`), so an embedded database inserting on this thread
/// overlaps with the parsing; memory stays bounded (at most `depth + 2` batches are filled at
/// once), and emptied batches go back to the reader to be filled again. A server on the same two
/// cores does better without it: the extra thread takes the CPU its backend needs
/// (docs/benchmarks-history.md, "The study database").
final class RowFeed: @unchecked Sendable {
    let rows: BundleRows
    /// The batch being sent.
    private(set) var batch = StudyRowBatch()
    /// The next row of `batch` to send.
    var index = 0
    /// Rows of the batches before `batch`.
    private var before = 0
    /// Rows taken so far: those of earlier batches and of this one up to `index`.
    var position: Int { before + index }
    private(set) var finished = false

    private static let depth = 2
    /// Filled batches, in order; nil without `readAhead`.
    private let pipe: ChunkPipe<StudyRowBatch>?
    /// Emptied batches the reader fills again.
    private let spares = SparePool<StudyRowBatch>()

    init(_ rows: BundleRows, readAhead: Bool) {
        self.rows = rows
        guard readAhead else { pipe = nil; return }
        let pipe = ChunkPipe<StudyRowBatch>(capacity: Self.depth)
        self.pipe = pipe
        pipe.start(name: "study bundle reader") { [self] pipe in
            while true {
                var next = spares.take() ?? StudyRowBatch()
                guard try self.rows.nextBatch(into: &next) else { return }
                try pipe.put(next)
            }
        }
    }

    /// True while `batch` has rows from `index` on, taking the next batch when it is used up;
    /// false once the bundle was read whole and checked. Rethrows what stopped the reader.
    func fill() throws -> Bool {
        if index < batch.count { return true }
        guard !finished else { return false }
        before += batch.count
        index = 0
        guard let pipe else {
            if try rows.nextBatch(into: &batch) { return true }
            finished = true
            return false
        }
        spares.put(batch)
        batch = StudyRowBatch()
        do {
            if let filled = try pipe.take() {
                batch = filled
                return true
            }
        } catch {
            finished = true
            throw error
        }
        finished = true
        return false
    }

    /// Ends the reader early (the load failed); the rows already read are dropped.
    func stop() {
        pipe?.cancelAndDrain()
    }
}

/// Things handed back for reuse, from any thread (a pool, not a hand-off: nobody waits for one).
final class SparePool<Thing>: @unchecked Sendable {
    private let lock = NSLock()
    private var things: [Thing] = []

    func put(_ thing: Thing) {
        lock.lock()
        things.append(thing)
        lock.unlock()
    }

    func take() -> Thing? {
        lock.lock()
        defer { lock.unlock() }
        return things.popLast()
    }
}
