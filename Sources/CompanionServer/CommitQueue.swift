import Foundation
import HandOff
import HealthModel
import Vault

/// Hands work from the server's request handlers to the one thread that owns the vault's
/// `CompanionIngest` (a `GroupWorker`). The thread takes everything waiting at once, so the posts
/// that arrived while a commit synced share the next commit (group commit); a handler resumes
/// only when its post is durable, or refused.
final class CommitQueue: @unchecked Sendable {
    enum Work {
        case post(CompanionPost, CheckedContinuation<Result<CompanionPostOutcome?, Error>, Never>)
        case checkToken(String, CheckedContinuation<String?, Never>)
        /// An anchor for the app whose token this is; `.success(nil)` inside means the token no longer works.
        case anchor(token: String, metric: String, CheckedContinuation<Result<HealthTimestamp??, Error>, Never>)
    }

    private var worker: GroupWorker<Work>?
    private let ingest: CompanionIngest
    /// The registry as of the last commit, for handlers to check tokens without waiting.
    private let registryLock = NSLock()
    private var registrySnapshot: CompanionRegistry
    /// Posts a commit takes at most.
    static let maxBatch = 4096
    /// Work waiting at most; past it a request is refused (503) instead of queued, so that a
    /// flood cannot hold unbounded memory.
    static let maxWaiting = 16_384

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
        worker = GroupWorker(name: "healthvault-commit", capacity: Self.maxWaiting, maxBatch: Self.maxBatch) { [self] batch in
            // A command waiting for the writer lock gets a gap between commits.
            if ingest.lockIsWanted { usleep(20_000) }
            process(batch)
        }
    }

    /// Stops taking work; what is waiting is finished first.
    func stop() {
        worker?.stop()
    }

    func submit(_ work: Work) {
        switch worker?.submit(work) ?? .stopped {
        case .queued: return
        case .full: fail(work, Busy())
        case .stopped: fail(work, ServerStopping())
        }
    }

    struct ServerStopping: Error, CustomStringConvertible {
        var description: String { "the server is stopping" }
    }

    struct Busy: Error, CustomStringConvertible {
        var description: String { "too many posts are waiting; retry in a second" }
    }

    private func process(_ batch: [Work]) {
        var posts: [(CompanionPost, CheckedContinuation<Result<CompanionPostOutcome?, Error>, Never>)] = []
        // Token checks of one batch share one look at the registry, taken without the writer lock.
        var checked: CompanionRegistry?
        for work in batch {
            switch work {
            case .post(let post, let continuation): posts.append((post, continuation))
            case .checkToken(let token, let continuation):
                if checked == nil { checked = (try? ingest.registryWithoutLock()) ?? ingest.registry }
                continuation.resume(returning: checked?.app(forToken: token)?.name)
            case .anchor(let token, let metric, let continuation):
                // Under the writer lock: the token as of now, and the vault as of now (an erased
                // month's samples are not an anchor).
                continuation.resume(returning: Result {
                    guard let app = try ingest.refreshedRegistry().app(forToken: token) else { return .some(nil) }
                    return .some(try ingest.anchor(app: app.name, metric: metric))
                })
                publishRegistry()
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
