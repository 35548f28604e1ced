import Foundation
import ResearchBundle

/// A bundle's data lines as study rows, pulled in batches: the lines of its NDJSON files (CSV
/// copies are skipped: they hold the same lines), cut at line ends across the stream's chunks.
/// `nextBatch()` returns nil only once the whole bundle checked out (`BundleStream`), so a
/// database that stages the batches and commits after nil holds nothing of a refused bundle.
final class BundleRows {
    let stream: BundleStream
    let manifest: BundleManifestInfo
    /// Lines read so far.
    private(set) var lines = 0
    private var file: BundleFileInfo?
    private var lineInFile = 0
    private var carry: [UInt8] = []
    private var finished = false
    static let batchSize = 1024

    /// Reads up to the manifest; `accept` may refuse the bundle by its manifest (the roster).
    init(stream: BundleStream, accept: (BundleManifestInfo) throws -> Void) throws {
        self.stream = stream
        guard case .manifest(let manifest)? = try stream.next() else {
            throw BundleError.refused(path: stream.path, reason: "malformed contents (no signed manifest)")
        }
        try accept(manifest)
        // FHIR and Open mHealth files are for systems that read those; the study tables take the lines.
        if !manifest.files.isEmpty, !manifest.files.contains(where: { $0.format == "ndjson" }) {
            throw BundleError.refused(path: stream.path, reason: "holds \(manifest.files[0].format) files, which study load does not read (ask for --format ndjson)")
        }
        self.manifest = manifest
    }

    /// The next rows, nil when the bundle has been read whole and checked.
    func nextBatch() throws -> [StudyRow]? {
        guard !finished else { return nil }
        var rows: [StudyRow] = []
        rows.reserveCapacity(Self.batchSize)
        while rows.count < Self.batchSize {
            guard let part = try stream.next() else {
                finished = true
                return rows.isEmpty ? nil : rows
            }
            switch part {
            case .manifest:
                throw BundleError.refused(path: stream.path, reason: "malformed contents")
            case .fileBegin(let info):
                file = info.format == "ndjson" ? info : nil
                lineInFile = 0
                carry.removeAll(keepingCapacity: true)
            case .bytes(let bytes):
                guard let file else { continue }
                var start = bytes.startIndex
                while let newline = bytes[start...].firstIndex(of: 0x0A) {
                    if carry.isEmpty {
                        try append(bytes[start..<newline], file: file, to: &rows)
                    } else {
                        carry += bytes[start..<newline]
                        try append(carry[...], file: file, to: &rows)
                        carry.removeAll(keepingCapacity: true)
                    }
                    start = newline + 1
                }
                carry += bytes[start...]
            case .fileEnd:
                if let file, !carry.isEmpty {
                    try append(carry[...], file: file, to: &rows)
                    carry.removeAll(keepingCapacity: true)
                }
                file = nil
            }
        }
        return rows
    }

    private func append(_ line: ArraySlice<UInt8>, file: BundleFileInfo, to rows: inout [StudyRow]) throws {
        lineInFile += 1
        guard !line.isEmpty else { return }
        lines += 1
        if lines == StudyPause.afterLines { StudyPause.wait("after \(lines) lines") }
        do {
            rows.append(try StudyRow(line: line, file: file, ordinal: lines))
        } catch let malformed as StudyRow.Malformed {
            throw BundleError.refused(path: stream.path, reason: "\(file.path) line \(lineInFile): \(malformed.reason)")
        }
    }
}
