import Foundation
import ResearchBundle

/// The bundles' file hashes, computed on a thread of their own `ahead` bundles ahead of the
/// one claimed last (a bundle for each connection), so the database is not left waiting while
/// the next file is read through once more.
final class FileHashPrefetch: @unchecked Sendable {
    private let paths: [String]
    private var results: [Result<String, Error>?]
    private let condition = NSCondition()
    /// How far the thread may run (the first bundle not to hash yet).
    private var wanted: Int
    private let ahead: Int
    private var stopped = false

    init(_ paths: [String], ahead: Int = 1) {
        self.paths = paths
        self.ahead = max(1, ahead)
        wanted = self.ahead
        results = Array(repeating: nil, count: paths.count)
        let thread = Thread { [self] in run() }
        thread.name = "study bundle hashes"
        thread.start()
    }

    /// The hash of bundle `index` (BLAKE2b-256 of the file, hex), waiting for it if need be.
    func hash(of index: Int) throws -> String {
        condition.lock()
        defer { condition.unlock() }
        wanted = max(wanted, index + 1 + ahead)
        condition.broadcast()
        while results[index] == nil { condition.wait() }
        let result = results[index]!
        results[index] = .success("")
        return try result.get()
    }

    /// Ends the thread (the load is over, or gave up).
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        for index in paths.indices {
            condition.lock()
            while index >= wanted, !stopped { condition.wait() }
            let stop = stopped
            condition.unlock()
            if stop { return }
            let result = Result { try StudyLoader.fileHash(paths[index]) }
            condition.lock()
            results[index] = result
            condition.broadcast()
            condition.unlock()
        }
    }
}
