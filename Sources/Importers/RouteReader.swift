import Foundation
import HandOff
import ZIPFoundation

/// The route files of a zip, each inflated (its CRC checked, its inflation bounded) and parsed
/// on one of two threads of their own, the routes handed back in the order given.
///
/// The routes are only known once the export XML is parsed, so they are read at the import's
/// end, where the other threads have little left to do: parsed on the importer's thread (a
/// tenth of a one-year import's instructions went to ~10 MB of GPX), they kept one core busy and
/// the other idle for the import's last tenth (docs/benchmarks-history.md). Each thread opens the zip
/// on its own (an `Archive` is one reader's) and takes every other file; at most one parsed
/// route per thread waits for the importer, so a few routes at most are in memory.
final class RouteReader {
    /// What reading one route file gave: its points, or what stopped it (a damaged entry or
    /// GPX that does not parse; the importer skips that route with a warning).
    typealias Outcome = Result<GPXHandler, Error>

    /// Route files run ~80 KB; smaller chunks than the export XML's keep what waits small.
    static let chunkSize = 256 << 10

    private let pipes: [ChunkPipe<Outcome>]
    private var next = 0
    private var closed = false

    /// Starts reading `files` (an entry of the zip at `zipPath` and the name errors give it).
    init(zipPath: String, files: [(entry: Entry, name: String)], threads: Int = 2) {
        // No thread when there is no file (most XML-only zips).
        let count = max(0, min(threads, files.count))
        pipes = (0..<count).map { _ in ChunkPipe<Outcome>(capacity: 1) }
        for (thread, pipe) in pipes.enumerated() {
            let share = UncheckedBox(value: files.indices.filter { $0 % count == thread }.map { files[$0] })
            pipe.start { pipe in
                let archive: Archive
                do {
                    archive = try Archive(url: URL(fileURLWithPath: zipPath), accessMode: .read)
                } catch {
                    for _ in share.value { try pipe.put(.failure(error)) }
                    return
                }
                for (entry, name) in share.value {
                    try pipe.put(Self.read(entry, of: archive, name: name))
                }
            }
        }
    }

    /// Inflates and parses one route file.
    private static func read(_ entry: Entry, of archive: Archive, name: String) -> Outcome {
        var gpx = GPXHandler()
        do {
            try AppleHealthImporter.parse(into: &gpx) { feed in
                try AppleHealthImporter.extract(entry, of: archive, name: name, bufferSize: chunkSize, feed)
            }
            return .success(gpx)
        } catch {
            return .failure(error)
        }
    }

    /// The next file's outcome, in the order the files were given; waits for it.
    func nextRoute() throws -> Outcome {
        let pipe = pipes[next % pipes.count]
        next += 1
        guard let outcome = try pipe.take() else {
            throw ImportError.unreadable(path: "route files", reason: "their reader stopped early")
        }
        return outcome
    }

    /// Stops the reading threads (if files are left) and waits for them.
    func close() {
        guard !closed else { return }
        closed = true
        for pipe in pipes { pipe.cancelAndDrain() }
    }
}
