import Foundation

/// One thread of its own that works for many producers: each `submit` queues a piece of work
/// without waiting, and the thread takes everything waiting at once (up to `maxBatch`), so the
/// work that arrived while the last group ran shares the next one. The companion server's
/// commit thread works this way (group commit): the posts that arrived while a commit synced
/// share the next commit.
///
/// Bounded: past `capacity` waiting pieces, `submit` refuses instead of queueing, so a flood
/// cannot hold unbounded memory. `stop` lets the thread finish what waits, then end; what is
/// submitted after it is refused. `body` answers each piece itself (a continuation, say): the
/// worker hands on no results and no errors.
public final class GroupWorker<Work>: @unchecked Sendable {
    /// Whether `submit` queued the work, and why not.
    public enum Submission: Equatable, Sendable {
        case queued
        /// `capacity` pieces wait already.
        case full
        /// `stop` was called.
        case stopped
    }

    private let condition = NSCondition()
    private var waiting: [Work] = []
    private var stopped = false
    private var running = true
    private let capacity: Int
    private let maxBatch: Int
    private let body: ([Work]) -> Void

    /// Starts the thread, named `name`, which calls `body` with each group in submission order.
    public init(name: String, capacity: Int, maxBatch: Int, body: @escaping ([Work]) -> Void) {
        self.capacity = max(1, capacity)
        self.maxBatch = max(1, maxBatch)
        self.body = body
        let thread = Thread { [self] in work() }
        thread.name = name
        thread.start()
    }

    /// Queues `work` unless the queue is full or stopped; never waits.
    public func submit(_ work: Work) -> Submission {
        condition.lock()
        defer { condition.unlock() }
        if stopped { return .stopped }
        if waiting.count >= capacity { return .full }
        waiting.append(work)
        condition.signal()
        return .queued
    }

    /// Refuses new work; the thread finishes what waits, then ends. Returns at once.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// `stop`, then waits until the thread has ended.
    public func stopAndWait() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while waiting.isEmpty && !stopped { condition.wait() }
            if waiting.isEmpty {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let group = Array(waiting.prefix(maxBatch))
            waiting.removeFirst(group.count)
            condition.unlock()
            body(group)
        }
    }
}
