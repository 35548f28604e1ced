import Foundation
import ZIPFoundation

/// The route files of a zip, inflated (their CRCs checked, their inflation bounded) one after
/// another on a thread of their own while the importer parses them: a decade of workouts holds
/// a thousand route files, ~100 MB of GPX, and inflating them on the parser's thread left the
/// other core idle for most of a second.
///
/// `read` takes the files in the order given (it may skip some); at most the pipe's few chunks
/// wait in memory. While the inflater is open, only its thread uses the archive: `close` stops
/// it and waits.
final class RouteInflater {
    private enum Piece {
        case chunk(Data)
        /// A file's end, with what stopped reading it early (the zip's damage), if anything.
        case end(Error?)
    }

    /// Route files run ~80 KB; smaller chunks than the export XML's keep what waits small.
    static let chunkSize = 256 << 10

    private let pipe = ChunkPipe<Piece>()
    /// The file whose pieces the pipe delivers next.
    private var next = 0
    private var closed = false

    /// Starts inflating `files` (an entry and the name errors give it) in order.
    init(archive: Archive, files: [(entry: Entry, name: String)]) {
        let shared = UncheckedBox(value: (archive, files))
        pipe.start { pipe in
            let (archive, files) = shared.value
            for (entry, name) in files {
                do {
                    try AppleHealthImporter.extract(entry, of: archive, name: name, bufferSize: Self.chunkSize) { try pipe.put(.chunk($0)) }
                } catch let error as ChunkPipeCancelled {
                    throw error
                } catch {
                    try pipe.put(.end(error))
                    continue
                }
                try pipe.put(.end(nil))
            }
        }
    }

    /// Hands the contents of file `index` to `feed`, the files before it not read yet skipped.
    /// Throws what reading the file threw, or what `feed` threw (once the file's rest is skipped,
    /// so the next file starts at its beginning).
    func read(_ index: Int, _ feed: (Data) throws -> Void) throws {
        precondition(index >= next, "route files are read in order")
        while next < index { try skipFile() }
        next += 1
        var feedError: Error?
        while let piece = try pipe.take() {
            switch piece {
            case .chunk(let data):
                guard feedError == nil else { continue }
                do { try feed(data) } catch { feedError = error }
            case .end(let error):
                if let error = feedError ?? error { throw error }
                return
            }
        }
        throw ImportError.unreadable(path: "route files", reason: "their reader stopped early")
    }

    private func skipFile() throws {
        next += 1
        while let piece = try pipe.take() {
            if case .end = piece { return }
        }
    }

    /// Stops the inflating thread (if files are left) and waits for it.
    func close() {
        guard !closed else { return }
        closed = true
        pipe.cancelAndDrain()
    }
}
