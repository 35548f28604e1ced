/// The bundles of one `study load` handed to its connections, a bundle at a time in the order
/// given, with one rule: a participant's bundles load in that order. A connection that opened a
/// bundle names its sender (`begin`) and waits while an earlier bundle is still being loaded by
/// the same sender, or by a sender not yet known (its bundle is still being opened). Waits are
/// only ever for earlier bundles, so they cannot go round in a circle.
actor BundleQueue {
    private let count: Int
    private var next = 0
    /// What stopped the load (a database failure), first of all.
    private(set) var failure: Error?
    /// The sender of each bundle claimed and opened, until it is finished.
    private var senders: [Int: String] = [:]
    /// Bundles claimed and not yet finished.
    private var open = Set<Int>()
    private var waiting: [(index: Int, sender: String, resume: CheckedContinuation<Void, Never>)] = []

    init(count: Int) {
        self.count = count
    }

    /// The next bundle to load, or nil once all were handed out or the load stopped.
    func claim() -> Int? {
        guard failure == nil, next < count else { return nil }
        defer { next += 1 }
        open.insert(next)
        return next
    }

    /// Bundle `index` was opened and is from `sender`: returns once no earlier bundle still
    /// loading is from the same sender or from one not yet known; throws `CancellationError`
    /// once the load stopped (the bundle is abandoned, not refused).
    func begin(_ index: Int, sender: String) async throws {
        senders[index] = sender
        wakeWaiters()
        if mustWait(index, sender: sender) {
            await withCheckedContinuation { waiting.append((index, sender, $0)) }
        }
        if failure != nil { throw CancellationError() }
    }

    /// Bundle `index` is loaded, refused or abandoned.
    func finish(_ index: Int) {
        open.remove(index)
        senders[index] = nil
        wakeWaiters()
    }

    /// Stops the load because of `error`: no more bundles are handed out, bundles waiting for
    /// their turn are abandoned, and a bundle already past its turn ends as it ends.
    func stop(_ error: Error) {
        if failure == nil { failure = error }
        for waiter in waiting { waiter.resume.resume() }
        waiting = []
    }

    /// Bundles waiting for their turn (for tests).
    var waitingCount: Int { waiting.count }

    private func mustWait(_ index: Int, sender: String) -> Bool {
        open.contains { $0 < index && (senders[$0] == nil || senders[$0] == sender) }
    }

    private func wakeWaiters() {
        var still: [(index: Int, sender: String, resume: CheckedContinuation<Void, Never>)] = []
        for waiter in waiting {
            if mustWait(waiter.index, sender: waiter.sender) { still.append(waiter) } else { waiter.resume.resume() }
        }
        waiting = still
    }
}
