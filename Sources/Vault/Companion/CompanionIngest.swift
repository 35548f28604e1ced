import EventLog
import Foundation
import HealthModel
import SecureMemory
import VaultEvents

/// The writer behind `vaultctl serve`: applies parsed posts to the vault, many posts to one
/// durable commit (group commit: the posts waiting while the last commit synced share the next
/// one). A post's outcome is returned only once its commit is durable.
///
/// Between commits the log's writer lock is released, so that other `vaultctl` commands can
/// write; before each commit it is taken back, and when another process wrote meanwhile the
/// vault is opened anew and the companion registry re-read (a token revoked by `companion revoke`
/// is refused from the next commit on, before anything of its post is written).
///
/// Not thread-safe: one writer thread owns it.
public final class CompanionIngest {
    private var vault: Vault
    private let directory: String
    private let passphrase: Passphrase
    private var session: ImportSession?
    private var lastCommitted: LogPosition
    /// `serve.lock`, held for as long as this ingest lives (commands then wait for its gaps).
    private let served: any StorageFile
    /// The apps and their tokens, as of the last commit (or refresh).
    public private(set) var registry: CompanionRegistry
    /// Latest end received per app and metric, as far as learned (`anchor`).
    private var anchors: [String: [String: HealthTimestamp]] = [:]
    /// Why the ingest writes no more (the passphrase it was started with no longer opens the vault).
    private var stopped: Stopped?

    /// The vault's passphrase or master key changed while serving: `serve` must be started again.
    public struct Stopped: Error, CustomStringConvertible {
        public var description: String { "the vault's passphrase changed while serving; start `vaultctl serve` again" }
    }

    /// Set when a commit failed: the handle is opened anew before the next one.
    private var mustReopen = false
    /// Seconds a commit waits for a command holding the writer lock before its posts fail.
    public var lockTimeout = 30.0

    /// Opens the vault for writing, runs `prepare` with it under the writer lock (the server makes
    /// its certificate there), marks it served and releases the lock until the first commit.
    public init(directory: String, passphrase: Passphrase, prepare: (Vault) throws -> Void = { _ in }) throws {
        self.directory = directory
        self.passphrase = passphrase
        served = try EventLog.markServed(directory: directory)
        vault = try Vault.open(at: directory, passphrase: passphrase, mode: .readWrite)
        try prepare(vault)
        registry = try vault.companionRegistry()
        lastCommitted = vault.committed
        try vault.log.releaseWriterLock()
    }

    /// Applies `posts` in one commit: each is refused (nil) when its app's token no longer works,
    /// else applied under the upsert rule. Throws when the commit fails; nothing of it is then durable.
    public func apply(_ posts: [CompanionPost], now: Date = Date()) throws -> [CompanionPostOutcome?] {
        try takeLock()
        defer { try? vault.log.releaseWriterLock() }
        var outcomes: [CompanionPostOutcome?] = []
        var appsWritten: [String: CompanionPostOutcome] = [:]
        let session = try currentSession()
        let before = lastCommitted
        do {
            for post in posts {
                guard registry.app(forTokenHash: post.tokenHash)?.name == post.app else {
                    outcomes.append(nil)
                    continue
                }
                session.startFile(path: post.app, format: "companion-post")
                session.revisable = true
                for (event, nested) in post.events { try session.add(event, nested: nested) }
                session.reject(post.rejected)
                try session.endFile()
                let file = session.file
                let outcome = CompanionPostOutcome(added: file.added, replaced: file.replaced, duplicates: file.duplicates,
                                                   rejected: file.rejected, erased: file.erased)
                outcomes.append(outcome)
                var total = appsWritten[post.app] ?? CompanionPostOutcome()
                total.added += outcome.added
                total.replaced += outcome.replaced
                total.duplicates += outcome.duplicates
                total.rejected += outcome.rejected
                appsWritten[post.app] = total
            }
            // One audit record per app and commit, not per post.
            for (app, total) in appsWritten.sorted(by: { $0.key < $1.key }) {
                try session.add(.importRecorded(at: now, ImportRecord(file: "companion:" + app, format: "companion-post",
                                                                      added: total.added + total.replaced,
                                                                      duplicates: total.duplicates, rejected: total.rejected,
                                                                      replaced: total.replaced)))
            }
            lastCommitted = try session.commit()
        } catch {
            session.rollback()
            self.session = nil
            vault.tables.reset()
            // A failed commit leaves the log handle refusing writes: the next commit opens it anew.
            mustReopen = true
            throw error
        }
        do {
            try session.beginNextCommit(learningFrom: before)
        } catch {
            // The posts are durable; only what the session learned of them is not: start afresh.
            self.session = nil
            mustReopen = true
        }
        for (post, outcome) in zip(posts, outcomes) where outcome != nil {
            for (metric, end) in post.latestEnds where anchors[post.app]?[metric].map({ $0.seconds < end.seconds }) ?? true {
                anchors[post.app, default: [:]][metric] = end
            }
        }
        if session.exceedsMemory(slots: 1 << 20) { self.session = nil }
        return outcomes
    }

    /// The registry as of now, and the vault brought up to date for reading: taken under the
    /// writer lock, so that what another process wrote is seen (a revoked token, an erased month).
    public func refreshedRegistry() throws -> CompanionRegistry {
        try takeLock()
        try vault.log.releaseWriterLock()
        return registry
    }

    /// The registry as `events.head` has it now, without the writer lock (a command holding it
    /// for long does not hold up a token check): re-read from the audit trail through a read-only
    /// handle when the head changed since the last look.
    public func registryWithoutLock() throws -> CompanionRegistry {
        let head = try? Data(contentsOf: URL(fileURLWithPath: LogDirectory(directory).head))
        if head == headSeen { return latestRegistry ?? registry }
        let reader = try vault.openedReadOnly()
        let fresh = try reader.companionRegistry()
        headSeen = head
        latestRegistry = fresh
        return fresh
    }

    private var headSeen: Data?
    private var latestRegistry: CompanionRegistry?

    /// The latest end received for `metric` (a HealthKit identifier) from `app`, nil when none.
    /// Learned from the posts of this run, else from the vault's months of the metric's category,
    /// newest first, until one holds a sample of the app.
    public func anchor(app: String, metric: String) throws -> HealthTimestamp? {
        if let known = anchors[app]?[metric] { return known }
        let found = try vault.latestEnd(of: metric, fromApp: app)
        if let found { anchors[app, default: [:]][metric] = found }
        return found
    }

    /// Takes the writer lock; when another process wrote meanwhile, opens the vault anew (with the
    /// passphrase when the master key changed) and re-reads the registry.
    private func takeLock() throws {
        if let stopped { throw stopped }
        if try vault.log.retakeWriterLock(timeout: lockTimeout), !mustReopen { return }
        mustReopen = false
        session = nil
        anchors = [:]
        try vault.log.releaseWriterLock()
        // The old handle's lock must be free before the new one takes it. The master key opens
        // the log again unless a re-key replaced it; then the passphrase does.
        do {
            vault = try vault.reopenedForWriting()
        } catch {
            do {
                vault = try Vault.open(at: directory, passphrase: passphrase, mode: .readWrite)
            } catch EventLogError.wrongPassphrase {
                // The passphrase no longer opens the keyslot (`passwd` while serving): every
                // commit would fail the same way, after a key derivation each.
                let reason = Stopped()
                stopped = reason
                throw reason
            }
        }
        registry = try vault.companionRegistry()
        lastCommitted = vault.committed
    }

    private func currentSession() throws -> ImportSession {
        if let session { return session }
        let made = try vault.startImportSession()
        made.erasedLabels = vault.erasedLabels()
        session = made
        return made
    }

    /// Whether a command waits for the writer lock: the server then leaves it a gap.
    public var lockIsWanted: Bool { vault.log.lockIsWanted }
}
