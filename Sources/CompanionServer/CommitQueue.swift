import Foundation
import HealthModel
import Vault

/// Hands work from the server's request handlers to the one thread that owns the vault's
/// `CompanionIngest`. The thread takes everything waiting at once, so the posts that arrived
/// while a commit synced share the next commit (group commit); a handler resumes only when its
/// post is durable, or refused.
final class CommitQueue: @unchecked Sendable {
    enum Work {
        case post(CompanionPost, CheckedContinuation<Result<CompanionPostOutcome?, Error>, Never>)
        case checkToken(String, CheckedContinuation<String?, Never>)
        case anchor(app: String, metric: String, CheckedContinuation<Result<HealthTimestamp?, Error>, Never>)
    }

    private let condition = NSCondition()
    private var waiting: [Work] = []
    private var stopped = false
    private var thread: Thread?
    private let ingest: CompanionIngest
    /// The registry as of the last commit, for handlers to check tokens without waiting.
    private let registryLock = NSLock()
    private var registrySnapshot: CompanionRegistry
    /// Posts a commit takes at most.
    static let maxBatch = 4096

    init(ingest: CompanionIngest) {
        self.ingest = ingest
        registrySnapshot = ingest.registry
    }

    var registry: CompanionRegistry {
        registryLock.lock()
        defer { registryLock.unlock() }
        return registrySnapshot
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "healthvault-commit"
        self.thread = thread
        thread.start()
    }

    /// Stops taking work; what is waiting is finished first.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    func submit(_ work: Work) {
        condition.lock()
        if stopped {
            condition.unlock()
            fail(work, ServerStopping())
            return
        }
        waiting.append(work)
        condition.signal()
        condition.unlock()
    }

    struct ServerStopping: Error, CustomStringConvertible {
        var description: String { "the server is stopping" }
    }

    private func run() {
        while true {
            condition.lock()
            while waiting.isEmpty && !stopped { condition.wait() }
            if waiting.isEmpty && stopped {
                condition.unlock()
                return
            }
            let batch = Array(waiting.prefix(Self.maxBatch))
            waiting.removeFirst(batch.count)
            condition.unlock()
            // A command waiting for the writer lock gets a gap between commits.
            if ingest.lockIsWanted { usleep(20_000) }
            process(batch)
        }
    }

    private func process(_ batch: [Work]) {
        var posts: [(CompanionPost, CheckedContinuation<Result<CompanionPostOutcome?, Error>, Never>)] = []
        for work in batch {
            switch work {
            case .post(let post, let continuation): posts.append((post, continuation))
            case .checkToken(let token, let continuation):
                let app = (try? ingest.refreshedRegistry())?.app(forToken: token)?.name
                publishRegistry()
                continuation.resume(returning: app)
            case .anchor(let app, let metric, let continuation):
                continuation.resume(returning: Result { try ingest.anchor(app: app, metric: metric) })
            }
        }
        guard !posts.isEmpty else { return }
        do {
            let outcomes = try ingest.apply(posts.map(\.0))
            publishRegistry()
            for ((_, continuation), outcome) in zip(posts, outcomes) { continuation.resume(returning: .success(outcome)) }
        } catch {
            publishRegistry()
            for (_, continuation) in posts { continuation.resume(returning: .failure(error)) }
        }
    }

    private func publishRegistry() {
        let current = ingest.registry
        registryLock.lock()
        registrySnapshot = current
        registryLock.unlock()
    }

    private func fail(_ work: Work, _ error: Error) {
        switch work {
        case .post(_, let continuation): continuation.resume(returning: .failure(error))
        case .checkToken(_, let continuation): continuation.resume(returning: nil)
        case .anchor(_, _, let continuation): continuation.resume(returning: .failure(error))
        }
    }
}
