import Foundation
import ResearchBundle

/// The bundles' file hashes, computed on a thread of their own one bundle ahead of the load,
/// so the database is not left waiting while the next file is read through once more.
final class FileHashPrefetch: @unchecked Sendable {
    private let paths: [String]
    private var results: [Result<String, Error>?]
    private let condition = NSCondition()
    /// How far the thread may run ahead of the bundle being loaded.
    private var wanted = 1
    private var stopped = false

    init(_ paths: [String]) {
        self.paths = paths
        results = Array(repeating: nil, count: paths.count)
        let thread = Thread { [self] in run() }
        thread.name = "study bundle hashes"
        thread.start()
    }

    /// The hash of bundle `index` (BLAKE2b-256 of the file, hex), waiting for it if need be.
    func hash(of index: Int) throws -> String {
        condition.lock()
        defer { condition.unlock() }
        wanted = max(wanted, index + 2)
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
