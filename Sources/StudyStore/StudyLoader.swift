import Dispatch
import Envelope
import Foundation
import ResearchBundle

/// What `study load` did.
public struct StudyLoadSummary: Sendable, Equatable {
    /// Bundles loaded now or found loaded before.
    public var bundles = 0
    /// Distinct senders among them.
    public var participants = 0
    /// Rows new to the database (and figures a later bundle changed).
    public var rows = 0
    /// Lines the database already held (a bundle loaded twice: all of its lines).
    public var duplicates = 0
    /// Rows deleted because a participant's latest consents no longer cover them.
    public var withdrawn = 0
    /// Bundles refused, with why; nothing of them was kept.
    public var refused: [Refusal] = []
    /// What was loaded but deserves a look (a since-last bundle whose predecessor is not here).
    public var warnings: [String] = []

    public struct Refusal: Sendable, Equatable {
        public var bundle: String
        public var reason: String
    }
}

/// `vaultctl study load`: bundles from a study's participants into one database, each checked
/// whole (key, signature, hashes, the roster) and loaded all or nothing.
public enum StudyLoader {
    /// Loads `bundles` (paths) opened with `keyFile` into `target`. A bundle that fails is
    /// refused and the others still load; a database that cannot be reached stops everything.
    /// PostgreSQL takes several bundles at once over `connections` connections (by default
    /// `HEALTHVAULT_STUDY_CONNECTIONS`, else one per core up to four), a participant's bundles
    /// in the order given; SQLite has one writer and takes them one after the other.
    /// Blocks the calling thread (PostgresNIO is asynchronous; a command line is not).
    public static func load(bundles: [String], keyFile: String, into target: StudyTarget, roster: StudyRoster?,
                            connections: Int? = nil) throws -> StudyLoadSummary {
        let count: Int
        switch target {
        case .sqlite: count = 1
        case .postgres: count = max(1, min(connections ?? defaultConnections, bundles.count, 16))
        }
        return try blocking {
            var databases: [any StudyDatabase] = []
            do {
                switch target {
                case .sqlite(let path): databases.append(try SQLiteStudyDatabase(path: path))
                case .postgres:
                    databases.append(try await PostgresStudyDatabase(target: target))
                    // More connections where the server grants them; a limit it sets (its
                    // max_connections, the role's) leaves the load with those it opened.
                    while databases.count < count, let another = try? await PostgresStudyDatabase(target: target) {
                        databases.append(another)
                    }
                }
                let summary = try await load(bundles, keyFile: keyFile, into: databases, roster: roster)
                for database in databases { await database.close() }
                return summary
            } catch {
                for database in databases { await database.close() }
                throw error
            }
        }
    }

    /// One connection per core (the server's backends and this process's readers share them),
    /// at most four, unless `HEALTHVAULT_STUDY_CONNECTIONS` says otherwise.
    static var defaultConnections: Int {
        if let text = ProcessInfo.processInfo.environment["HEALTHVAULT_STUDY_CONNECTIONS"], let given = Int(text), given > 0 { return given }
        return min(ProcessInfo.processInfo.activeProcessorCount, 4)
    }

    /// What became of one bundle.
    private enum Outcome {
        case loaded(fingerprint: String, counts: LoadCounts, follows: String?)
        case refused(String)
    }

    private static func load(_ bundles: [String], keyFile: String, into databases: [any StudyDatabase], roster: StudyRoster?) async throws -> StudyLoadSummary {
        for database in databases { try await database.prepare() }
        let hashes = FileHashPrefetch(bundles, ahead: databases.count)
        defer { hashes.stop() }
        let queue = BundleQueue(count: bundles.count)
        let outcomes = await withTaskGroup(of: [(Int, Outcome)].self) { group in
            for database in databases {
                let connection = UncheckedDatabase(database)
                group.addTask {
                    var done: [(Int, Outcome)] = []
                    while let index = await queue.claim() {
                        do {
                            done.append((index, try await loadOne(bundles[index], index: index, hashes: hashes, keyFile: keyFile,
                                                                  into: connection.database, roster: roster, queue: queue)))
                            await queue.finish(index)
                        } catch {
                            // The load stops: no bundle is handed out or let through any more,
                            // and this connection (its transaction rolled back) closes now, so no
                            // lock of its holds up the others finishing their bundles.
                            await queue.stop(error)
                            await queue.finish(index)
                            await connection.database.close()
                            break
                        }
                    }
                    return done
                }
            }
            var all: [(Int, Outcome)] = []
            for await done in group { all += done }
            return all.sorted { $0.0 < $1.0 }
        }
        if let failure = await queue.failure { throw failure }
        var summary = StudyLoadSummary()
        var senders = Set<String>()
        for (index, outcome) in outcomes {
            switch outcome {
            case .refused(let reason):
                summary.refused.append(.init(bundle: bundles[index], reason: reason))
            case .loaded(let fingerprint, let counts, let follows):
                // Asked once every bundle is in: the one it follows may have loaded after it.
                if let follows, try await databases[0].loadedLines(bundle: follows) == nil {
                    summary.warnings.append("\(bundles[index]) follows bundle \(follows.prefix(16))…, which is not in this study: what only that bundle held is missing")
                }
                summary.bundles += 1
                senders.insert(fingerprint)
                summary.rows += counts.added
                summary.duplicates += counts.duplicates
                summary.withdrawn += counts.withdrawn
            }
        }
        summary.participants = senders.count
        return summary
    }

    /// Loads bundle `index`, or says why it was refused; throws what stops the whole load.
    private static func loadOne(_ path: String, index: Int, hashes: FileHashPrefetch, keyFile: String, into database: any StudyDatabase,
                                roster: StudyRoster?, queue: BundleQueue) async throws -> Outcome {
        do {
            let (fingerprint, counts, follows) = try await loadRetrying(path, index: index, hash: { try hashes.hash(of: index) },
                                                                       keyFile: keyFile, into: database, roster: roster, queue: queue)
            return .loaded(fingerprint: fingerprint, counts: counts, follows: follows)
        } catch let error as BundleError {
            return .refused("\(error)")
        } catch let error as StudyError {
            switch error {
            case .notOnRoster, .busy: return .refused("\(error)")
            default: throw error
            }
        }
    }

    /// Loads one bundle, again from its start when the server broke a deadlock with another
    /// loader by rolling it back (loaders side by side into a new study, each making the months
    /// it needs), after a pause that grows and varies so they fall out of step; eight tries.
    private static func loadRetrying(_ path: String, index: Int, hash: () throws -> String, keyFile: String, into database: any StudyDatabase,
                                     roster: StudyRoster?, queue: BundleQueue) async throws -> (String, LoadCounts, String?) {
        let hash = try hash()
        var attempt = 1
        while true {
            do {
                return try await load(path, index: index, hash: hash, keyFile: keyFile, into: database, roster: roster, queue: queue)
            } catch StudyError.busy where attempt < 8 {
                try await Task.sleep(nanoseconds: UInt64.random(in: 50_000_000...200_000_000) * UInt64(attempt))
                attempt += 1
            }
        }
    }

    private static func load(_ path: String, index: Int, hash: String, keyFile: String, into database: any StudyDatabase,
                             roster: StudyRoster?, queue: BundleQueue) async throws -> (String, LoadCounts, String?) {
        let stream = try BundleStream(path: path, keyFile: keyFile, expectSender: nil)
        var label: String?
        let rows = try BundleRows(stream: stream) { manifest in
            if let roster {
                guard let known = roster.label(of: manifest.senderFingerprint) else {
                    throw StudyError.notOnRoster(path: path, fingerprint: manifest.senderFingerprint)
                }
                label = known
            }
        }
        let fingerprint = rows.manifest.senderFingerprint
        try await queue.begin(index, sender: fingerprint)
        if let lines = try await database.loadedLines(bundle: hash) {
            return (fingerprint, LoadCounts(added: 0, duplicates: lines, withdrawn: 0), nil)
        }
        guard let made = ManifestDate.parse(rows.manifest.createdAt) else {
            throw BundleError.refused(path: path, reason: "malformed manifest")
        }
        let consents = String(decoding: try JSONEncoder().encode(rows.manifest.consents), as: UTF8.self)
        let bundle = PendingBundle(path: path, hash: hash, fingerprint: fingerprint, label: label, recipient: rows.manifest.recipient,
                                   madeAt: ISO8601DateFormatter().string(from: made), follows: rows.manifest.follows, consents: consents)
        return (fingerprint, try await database.load(bundle, rows: rows), bundle.follows)
    }

    /// BLAKE2b-256 of the file (hex), read a MiB at a time.
    static func fileHash(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw BundleError.refused(path: path, reason: "cannot be read") }
        defer { try? handle.close() }
        let digest = Digest()
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty { digest.update(Array(data)) }
        return digest.finish().hex
    }

    /// Runs `body` to its end on Swift's concurrency pool while this thread waits.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }
}

/// A connection handed to the one task that uses it (a database object is not shared).
private struct UncheckedDatabase: @unchecked Sendable {
    let database: any StudyDatabase
    init(_ database: any StudyDatabase) { self.database = database }
}

/// The result an asynchronous body hands to the thread waiting for it (written before the
/// semaphore is signalled, read after it is waited on).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}
