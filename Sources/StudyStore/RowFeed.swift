import Foundation

/// A bundle's rows a batch at a time, with the place reached in the current batch, so a COPY
/// that pauses mid-batch (to make a partition, or to send staged rows) resumes where it stopped.
///
/// With `readAhead`, the rows are read (decrypted, checked, parsed) on a thread of their own up
/// to `depth` batches ahead, so an embedded database inserting on this thread overlaps with the
/// parsing; memory stays bounded (at most `depth + 2` batches exist, and they are reused). A
/// server on the same two cores does better without it: the extra thread takes the CPU its
/// backend needs (docs/benchmarks-history.md, "The study database").
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

    private let condition = NSCondition()
    /// Filled batches in order; a failure or the end (nil) last.
    private var ready: [Result<StudyRowBatch?, Error>] = []
    /// Emptied batches the reader fills again.
    private var spare: [StudyRowBatch] = []
    private var stopped = false
    private static let depth = 2

    private let readAhead: Bool

    init(_ rows: BundleRows, readAhead: Bool) {
        self.rows = rows
        self.readAhead = readAhead
        guard readAhead else { return }
        let thread = Thread { [self] in read() }
        thread.name = "study bundle reader"
        thread.start()
    }

    /// True while `batch` has rows from `index` on, taking the next batch when it is used up;
    /// false once the bundle was read whole and checked. Rethrows what stopped the reader.
    func fill() throws -> Bool {
        if index < batch.count { return true }
        guard !finished else { return false }
        guard readAhead else {
            before += batch.count
            index = 0
            if try rows.nextBatch(into: &batch) { return true }
            finished = true
            return false
        }
        condition.lock()
        defer { condition.unlock() }
        before += batch.count
        spare.append(batch)
        condition.broadcast()
        while ready.isEmpty { condition.wait() }
        let next = ready.removeFirst()
        condition.broadcast()
        index = 0
        switch next {
        case .success(let filled?):
            batch = filled
            return true
        case .success(nil):
            batch = StudyRowBatch()
            finished = true
            return false
        case .failure(let error):
            batch = StudyRowBatch()
            finished = true
            throw error
        }
    }

    /// Ends the reader early (the load failed); the rows already read are dropped.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func read() {
        while true {
            condition.lock()
            while ready.count >= Self.depth, !stopped { condition.wait() }
            var next = stopped ? nil : (spare.popLast() ?? StudyRowBatch())
            condition.unlock()
            guard next != nil else { return }
            let result: Result<StudyRowBatch?, Error> = Result { try rows.nextBatch(into: &next!) ? next : nil }
            condition.lock()
            ready.append(result)
            condition.broadcast()
            condition.unlock()
            guard case .success(.some) = result else { return }
        }
    }
}
