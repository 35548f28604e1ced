import Foundation
import HandOff
import ResearchBundle

/// The bundles' file hashes, computed in order on a thread of their own (a `ChunkPipe`) up to
/// `ahead` bundles ahead of the ones taken (a bundle for each connection), so the database is not
/// left waiting while the next file is read through once more.
final class FileHashPrefetch: @unchecked Sendable {
    private let pipe: ChunkPipe<Result<String, Error>>
    private let lock = NSLock()
    /// Hashes taken from the pipe and not yet asked for, by bundle.
    private var taken: [Int: Result<String, Error>] = [:]
    private var next = 0

    init(_ paths: [String], ahead: Int = 1) {
        pipe = ChunkPipe(capacity: max(1, ahead))
        pipe.start(name: "study bundle hashes") { pipe in
            for path in paths { try pipe.put(Result { try StudyLoader.fileHash(path) }) }
        }
    }

    /// The hash of bundle `index` (BLAKE2b-256 of the file, hex), waiting for it if need be.
    /// Each bundle's hash is asked for once.
    func hash(of index: Int) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        while taken[index] == nil, let result = try pipe.take() {
            taken[next] = result
            next += 1
        }
        // The pipe ends only after the last bundle's hash, and each is asked for once.
        guard let result = taken.removeValue(forKey: index) else { preconditionFailure("bundle \(index) has no hash to give") }
        return try result.get()
    }

    /// Ends the thread (the load is over, or gave up), once the hash it is making is done.
    func stop() {
        pipe.cancelAndDrain()
    }
}
