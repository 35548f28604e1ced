import Foundation
import ResearchBundle

/// A bundle's data lines as study rows, pulled in batches: the lines of its NDJSON files (CSV
/// copies are skipped: they hold the same lines), cut at line ends across the stream's chunks.
/// `nextBatch(into:)` returns false only once the whole bundle checked out (`BundleStream`), so a
/// database that stages the batches and commits after nil holds nothing of a refused bundle.
final class BundleRows {
    let stream: BundleStream
    let manifest: BundleManifestInfo
    /// Lines read so far.
    private(set) var lines = 0
    /// Rows read so far that the bundle's own consents do not cover (none, from our exporter).
    private(set) var outsideConsents = 0
    private let coverage: Coverage
    /// The current file's spans: its category at its granularity, as `YYYY-MM-DD` bytes.
    private var fileSpans: [(from: [UInt8], to: [UInt8])] = []
    private var file: (info: BundleFileInfo, facts: StudyRowBatch.FileFacts)?
    private let scanner = JSONLineScanner()
    private var lineInFile = 0
    private var carry: [UInt8] = []
    private var finished = false
    static let batchSize = 4096
    /// A batch also ends once its fields take this many bytes (lines can be long: a record's metadata).
    static let batchBytes = 16 << 20
    /// The longest line a bundle may have.
    static let maximumLineBytes = 64 << 20

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
        coverage = Coverage(receipts: manifest.consents)
    }

    /// Fills `batch` with the next rows (emptied first); false, with the batch empty, once the
    /// bundle has been read whole and checked.
    func nextBatch(into batch: inout StudyRowBatch) throws -> Bool {
        batch.removeAll()
        guard !finished else { return false }
        while batch.count < Self.batchSize, batch.arena.count < Self.batchBytes {
            guard let part = try stream.next() else {
                finished = true
                return batch.count > 0
            }
            switch part {
            case .manifest:
                throw BundleError.refused(path: stream.path, reason: "malformed contents")
            case .fileBegin(let info):
                file = info.format == "ndjson" ? (info, StudyRowBatch.FileFacts(info)) : nil
                fileSpans = coverage.spans.filter { $0.category == info.category && $0.granularity == info.granularity }
                    .map { (Array($0.from.utf8), Array($0.to.utf8)) }
                lineInFile = 0
                carry.removeAll(keepingCapacity: true)
            case .bytes(let bytes):
                guard let file else { continue }
                try bytes.withUnsafeBufferPointer { chunk in
                    var start = 0
                    while let newline = chunk[start...].firstIndex(of: 0x0A) {
                        if carry.isEmpty {
                            try append(UnsafeBufferPointer(rebasing: chunk[start..<newline]), file: file, to: &batch)
                        } else {
                            carry += chunk[start..<newline]
                            try carry.withUnsafeBufferPointer { try append($0, file: file, to: &batch) }
                            carry.removeAll(keepingCapacity: true)
                        }
                        start = newline + 1
                    }
                    carry += chunk[start...]
                    if carry.count > Self.maximumLineBytes {
                        throw BundleError.refused(path: stream.path, reason: "\(file.info.path) line \(lineInFile + 1): longer than \(Self.maximumLineBytes >> 20) MiB")
                    }
                }
            case .fileEnd:
                if let file, !carry.isEmpty {
                    try carry.withUnsafeBufferPointer { try append($0, file: file, to: &batch) }
                    carry.removeAll(keepingCapacity: true)
                }
                file = nil
            }
        }
        return true
    }

    private func append(_ line: UnsafeBufferPointer<UInt8>, file: (info: BundleFileInfo, facts: StudyRowBatch.FileFacts), to batch: inout StudyRowBatch) throws {
        lineInFile += 1
        guard !line.isEmpty else { return }
        lines += 1
        do {
            try batch.append(line: line, scanner: scanner, file: file.facts, ordinal: lines)
        } catch {
            throw BundleError.refused(path: stream.path, reason: "\(file.info.path) line \(lineInFile): \(error.reason)")
        }
        if !isCovered(row: batch.count - 1, of: batch) { outsideConsents += 1 }
    }

    /// Whether the bundle's own consents cover the row (as `Coverage.covered` judges it).
    private func isCovered(row: Int, of batch: StudyRowBatch) -> Bool {
        guard let day = batch.span(row, .day) else { return !fileSpans.isEmpty }
        return batch.arena.withUnsafeBufferPointer { arena in
            let bytes = UnsafeBufferPointer(rebasing: arena[day])
            return fileSpans.contains { !bytes.lexicographicallyPrecedes($0.from) && !$0.to.lexicographicallyPrecedes(bytes) }
        }
    }
}
