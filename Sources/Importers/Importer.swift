import Foundation
import HealthModel
import VaultEvents

/// Where an importer's events go. The vault's import session is one (it deduplicates and writes
/// them to the log); a test or a dry run can be another.
public protocol ImportSink: AnyObject {
    /// Takes one event. `nested` marks records repeated inside a correlation, which the sink
    /// should not count again when it already holds them.
    func add(_ event: VaultEvent, nested: Bool) throws
    /// Takes one sample: the same as `add(.sample(sample), nested:)` (the default), for a sink
    /// that takes samples without an event around them. The sample is the sink's to keep.
    func add(sample: consuming HealthSample, nested: Bool) throws
    /// Counts records left out, each alone, for the file's report.
    func reject(_ count: Int)
    /// A note for the file's report: rejections by reason, missing route files. Never a value.
    func warn(_ message: String)
}

extension ImportSink {
    public func add(sample: consuming HealthSample, nested: Bool) throws {
        try add(.sample(sample), nested: nested)
    }
}

/// Bytes to import, wherever they come from: a file, an entry of a zip, the body of a request.
/// The parsers read them in chunks and never see where they came from.
public struct ImportInput {
    /// How errors and reports name the input: a path, `export.zip:apple_health_export/export.xml`.
    public var name: String
    /// Bytes in all when known, for progress.
    public var size: Int64?
    /// Hands the bytes to its argument in chunks, in order.
    public var read: ((Data) throws -> Void) throws -> Void

    public init(name: String, size: Int64?, read: @escaping ((Data) throws -> Void) throws -> Void) {
        self.name = name
        self.size = size
        self.read = read
    }

    /// A file, read in 1 MiB chunks.
    public static func file(_ path: String) -> ImportInput {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        return ImportInput(name: path, size: size) { body in
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ImportError.unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            defer { try? handle.close() }
            while let data = try handle.read(upToCount: Importer.chunkSize), !data.isEmpty { try body(data) }
        }
    }

    /// Bytes already in memory (a request's body).
    public static func bytes(_ data: Data, name: String) -> ImportInput {
        ImportInput(name: name, size: Int64(data.count)) { body in
            var offset = 0
            while offset < data.count {
                let end = min(offset + Importer.chunkSize, data.count)
                try body(data.subdata(in: offset..<end))
                offset = end
            }
        }
    }
}

/// The importers' front door: which format a file is, and the one parser for each format.
public enum Importer {
    /// Bytes per chunk handed to a parser.
    public static let chunkSize = 1 << 20

    /// Reads one file of `format` into `sink`. A zip is read where it lies (its entries are found
    /// by its directory); every other format is read as a stream (`ImportInput.file`).
    ///
    /// - Parameter progress: bytes read so far and in all (uncompressed).
    /// - Throws: `ImportError` naming the file and the place; errors of the sink as it threw them.
    public static func importFile(_ path: String, format: ImportFormat, into sink: ImportSink, timeZone: TimeZone,
                                  progress: @escaping (Int64, Int64) -> Void = { _, _ in }) throws {
        try passingSinkErrors {
            switch format {
            case .appleHealthZip: try AppleHealthImporter(sink: sink, progress: progress).importZip(at: path)
            case .appleHealthXML:
                try AppleHealthImporter(sink: sink, progress: progress)
                    .importXML(.file(path), routeDirectory: (path as NSString).deletingLastPathComponent)
            default: try importStream(.file(path), format: format, into: sink, timeZone: timeZone, progress: progress)
            }
        }
    }

    /// Reads bytes of `format` (not a zip, which needs its directory at the end) into `sink`.
    /// Route files named by an XML export cannot be reached from a stream; they are counted as
    /// missing.
    public static func importStream(_ input: ImportInput, format: ImportFormat, into sink: ImportSink, timeZone: TimeZone,
                                    progress: @escaping (Int64, Int64) -> Void = { _, _ in }) throws {
        try passingSinkErrors {
            switch format {
            case .appleHealthZip: throw ImportError.unreadable(path: input.name, reason: "a zip archive must be imported from a file")
            case .appleHealthXML: try AppleHealthImporter(sink: sink, progress: progress).importXML(input, routeDirectory: nil)
            case .companionJSON: try CompanionJSONImporter(sink: sink, timeZone: timeZone).importJSON(input)
            case .csv: try CSVImporter(sink: sink, timeZone: timeZone, progress: progress).importCSV(input)
            case .ecgCSV: try ECGReader.importECG(input, into: sink)
            case .gpx: try AppleHealthImporter(sink: sink, progress: progress).importGPX(input, timeZone: timeZone)
            case .fit: try FITImporter(sink: sink, timeZone: timeZone).importFIT(input)
            case .tcx: try TCXWorkout.importTCX(input, into: sink, timeZone: timeZone)
            }
        }
    }

    /// Errors the sink threw travel through the parsers wrapped, so that no parser mistakes them
    /// for its own; here they are unwrapped.
    private static func passingSinkErrors(_ body: () throws -> Void) throws {
        do { try body() } catch let failure as SinkFailure { throw failure.underlying }
    }
}

/// An error of the sink, carried through a parser untouched.
struct SinkFailure: Error {
    var underlying: Error
}

extension ImportSink {
    /// `add`, with the sink's errors marked as not the parser's.
    func emit(_ event: VaultEvent, nested: Bool = false) throws {
        do { try add(event, nested: nested) } catch { throw SinkFailure(underlying: error) }
    }

    /// `emit(.sample(sample), nested:)`, the sample moved on rather than copied.
    func emit(sample: consuming HealthSample, nested: Bool = false) throws {
        do { try add(sample: sample, nested: nested) } catch { throw SinkFailure(underlying: error) }
    }
}
