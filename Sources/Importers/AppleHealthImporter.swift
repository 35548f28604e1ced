import Foundation
import HandOff
import HealthModel
import VaultEvents
import ZIPFoundation

/// Streams an Apple Health export (the `export.zip` the Health app shares, or the `export.xml`
/// inside it) into a sink, in constant memory.
struct AppleHealthImporter {
    let sink: ImportSink
    /// Called with bytes read so far and the total, for a progress bar.
    let progress: (Int64, Int64) -> Void

    static let chunkSize = Importer.chunkSize

    /// A route file a workout names, to read once the export XML is done.
    struct RouteReference {
        var workoutStart: HealthTimestamp
        var path: String
        /// The span the route element (else its workout) gives: where its points lie.
        var start: HealthTimestamp? = nil
        var end: HealthTimestamp? = nil
        /// Whether another reference names the same file (Apple names two 30-second segments'
        /// files alike): then each takes only the points inside its own span.
        var sharedFile = false
        /// A route file of the export no workout names: kept, placed at its first point.
        var unreferenced = false

        /// The reference of such a file (its workout's start is its first point's, once read).
        static func unreferenced(path: String) -> RouteReference {
            RouteReference(workoutStart: HealthTimestamp(seconds: 0, utcOffset: 0), path: path, unreferenced: true)
        }
    }

    // MARK: Zip

    func importZip(at path: String) throws {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw ImportError.unreadable(path: path, reason: "not a readable zip archive (\(error))")
        }
        let entries = archive.filter { entry in
            entry.type == .file && !Self.isNoise(entry.path)
        }
        let candidates = entries.filter { Self.isExportXMLCandidate($0.path) }
        guard let export = try candidates.first(where: { try looksLikeExport(archive, $0) }) else {
            // An export XML that is there but empty is said so, not taken for a missing one.
            if let empty = candidates.first(where: { $0.uncompressedSize == 0 }) {
                throw ImportError.notAnExport(path: "\(path):\(empty.path)", reason: "the export XML is empty")
            }
            throw ImportError.notAnExport(path: path, reason: "the zip holds no export XML (only \(entries.count) other file(s))")
        }
        // What the zip holds beside the export that this build does not import is named, never
        // skipped without a word.
        let cda = entries.filter { ($0.path as NSString).lastPathComponent.lowercased().hasSuffix("_cda.xml") }.count
        if cda > 0 { sink.warn("\(cda) CDA document(s) (export_cda.xml) not imported: they repeat the export's records in another format") }
        let name = "\(path):\(export.path)"
        let total = Int64(clamping: export.uncompressedSize)
        var done: Int64 = 0
        var routes: [RouteReference] = []
        var tally = RejectionTally()
        let clinical = ClinicalRecordQueue()
        var handler = makeHandler(routes: { routes.append($0) }, clinical: clinical, tally: { tally.add($0, at: $1) })
        // Inflate (and check the CRC) on another thread while this one parses: with our own
        // stream (`ZipEntryStream`) where it places the entry, else with ZIPFoundation.
        let pipe = ChunkPipe<Data>()
        let shared = UncheckedBox(value: (archive, export))
        pipe.start { pipe in
            let (archive, export) = shared.value
            var limit = InflationLimit(entry: export, name: name)
            var checksum = ZipChecksum()
            let take = { (data: Data) in
                try limit.add(data.count)
                checksum.add(data)
                try pipe.put(data)
            }
            if let stream = ZipEntryStream(entry: export, inZipAt: path) {
                try stream.read(chunkSize: Self.chunkSize, name: name, take)
            } else {
                _ = try archive.extract(export, bufferSize: Self.chunkSize, skipCRC32: true, consumer: take)
            }
            try checksum.check(export, name: name)
        }
        do {
            try Self.parse(into: &handler) { feed in
                while let data = try pipe.take() {
                    try feed(data)
                    done += Int64(data.count)
                    progress(done, total)
                }
            }
        } catch {
            pipe.cancelAndDrain()
            throw Self.translate(error, name: name)
        }
        finish(handler: handler, tally: tally, entry: export.path)

        // FHIR resources of clinical records, beside the XML in `clinical-records/`.
        let exportBase = (export.path as NSString).deletingLastPathComponent
        let entriesByPath = Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        try clinical.emit(into: sink, missing: "from the zip") { wanted in
            guard let entry = entriesByPath[Self.join(exportBase, wanted)] else { return nil }
            let entryName = "\(path):\(entry.path)"
            var data = Data()
            try Self.extract(entry, of: archive, name: entryName) {
                data.append($0)
                guard data.count <= ClinicalRecordQueue.maximumResourceBytes else { throw ClinicalRecordQueue.TooLarge() }
            }
            return data
        }

        // ECG recordings, each read whole (a few hundred kilobytes).
        for entry in entries where entry.path.lowercased().contains("electrocardiograms/") && entry.path.lowercased().hasSuffix(".csv") {
            let entryName = "\(path):\(entry.path)"
            try ECGReader.importECG(ImportInput(name: entryName, size: Int64(clamping: entry.uncompressedSize)) { feed in
                try Self.extract(entry, of: archive, name: entryName, feed)
            }, into: sink)
        }

        // Route files sit beside the XML: `<export dir>/workout-routes/...`, inflated and parsed
        // on two other threads while this one hands the routes on.
        var located = Self.locateRoutes(routes, base: exportBase) { entriesByPath[$0] }
        // Route files of the export that no workout names are kept too, placed at their first point.
        let named = Set(located.found.map(\.file.path))
        let routeFolder = Self.join(exportBase, "/workout-routes/")
        let unreferenced = entries.filter { $0.path.hasPrefix(routeFolder) && $0.path.lowercased().hasSuffix(".gpx") && !named.contains($0.path) }
        for entry in unreferenced {
            located.found.append((.unreferenced(path: entry.path), entry))
        }
        let reader = RouteReader(zipPath: path, files: located.found.map { ($0.file, "\(path):\($0.file.path)") })
        defer { reader.close() }
        for (route, entry) in located.found {
            try emitRoute(route, label: entry.path, name: "\(path):\(entry.path)", reader.nextRoute())
        }
        warnAboutRoutes(missing: located.missing, outside: located.outside, unreferenced: unreferenced.count, place: "from the zip")
    }

    /// Inflates an entry beside the export XML (a route, an ECG, a clinical resource) in chunks,
    /// its CRC checked (with zlib's, see `ZipChecksum`) and its inflation bounded.
    static func extract(_ entry: Entry, of archive: Archive, name: String, bufferSize: Int = chunkSize, _ feed: (Data) throws -> Void) throws {
        var limit = InflationLimit(entry: entry, name: name)
        var checksum = ZipChecksum()
        _ = try archive.extract(entry, bufferSize: bufferSize, skipCRC32: true) {
            try limit.add($0.count)
            checksum.add($0)
            try feed($0)
        }
        try checksum.check(entry, name: name)
    }

    private func looksLikeExport(_ archive: Archive, _ entry: Entry) throws -> Bool {
        struct Enough: Error {}
        var head = Data()
        do {
            _ = try archive.extract(entry, bufferSize: 4096, skipCRC32: true) { data in
                head.append(data)
                if head.count >= 4096 { throw Enough() }
            }
        } catch is Enough {
        } catch {
            return false
        }
        return head.range(of: Data("<HealthData".utf8)) != nil || head.range(of: Data("DOCTYPE HealthData".utf8)) != nil
    }

    // MARK: Plain XML

    /// Reads an export XML from `input`; route files are looked for in `routeDirectory` (beside
    /// the XML), or counted as missing when there is none.
    func importXML(_ input: ImportInput, routeDirectory: String?) throws {
        let total = input.size ?? 0
        var done: Int64 = 0
        var routes: [RouteReference] = []
        var tally = RejectionTally()
        let clinical = ClinicalRecordQueue()
        var handler = makeHandler(routes: { routes.append($0) }, clinical: clinical, tally: { tally.add($0, at: $1) })
        do {
            try Self.parse(into: &handler) { feed in
                try input.read { data in
                    try feed(data)
                    done += Int64(data.count)
                    progress(done, total)
                }
            }
        } catch {
            throw Self.translate(error, name: input.name)
        }
        finish(handler: handler, tally: tally, entry: input.name)
        try clinical.emit(into: sink, missing: routeDirectory == nil ? "(the export was not read from a folder)" : "beside \(input.name)") { wanted in
            guard let routeDirectory, !Self.passesThroughLink(Self.join(routeDirectory, wanted), below: routeDirectory),
                  let handle = FileHandle(forReadingAtPath: Self.join(routeDirectory, wanted)) else { return nil }
            defer { try? handle.close() }
            let data = try handle.read(upToCount: ClinicalRecordQueue.maximumResourceBytes + 1) ?? Data()
            guard data.count <= ClinicalRecordQueue.maximumResourceBytes else { throw ClinicalRecordQueue.TooLarge() }
            return data
        }
        let place = routeDirectory == nil ? "(the export was not read from a folder)" : "beside \(input.name)"
        // A symbolic link on the way (the file, or a folder from the export's on) could lead
        // anywhere on the disk: never followed, said.
        var links = 0
        var located = Self.locateRoutes(routes, base: routeDirectory ?? "") { (file: String) -> String? in
            guard let routeDirectory, FileManager.default.fileExists(atPath: file) else { return nil }
            guard !Self.passesThroughLink(file, below: routeDirectory) else {
                links += 1
                return nil
            }
            return file
        }
        if links > 0 { sink.warn("\(links) route file(s) reached through a symbolic link not read (only files of the export are read)") }
        // Route files of the folder no workout names are kept too, placed at their first point.
        var unreferenced = 0
        if let routeDirectory {
            let folder = routeDirectory + "/workout-routes"
            let named = Set(located.found.map(\.file))
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
            for name in names where name.lowercased().hasSuffix(".gpx") && !named.contains(folder + "/" + name)
                && !Self.passesThroughLink(folder + "/" + name, below: routeDirectory) {
                located.found.append((.unreferenced(path: "/workout-routes/" + name), folder + "/" + name))
                unreferenced += 1
            }
        }
        for (route, file) in located.found {
            try importRoute(route, label: file, name: file) { feed in
                guard let handle = FileHandle(forReadingAtPath: file) else {
                    throw ImportError.unreadable(path: file, reason: "cannot be opened")
                }
                defer { try? handle.close() }
                try Self.readChunks(handle, feed)
            }
        }
        warnAboutRoutes(missing: located.missing, outside: located.outside, unreferenced: unreferenced, place: place)
    }

    /// Whether `path`, or a folder between `base` and it, is a symbolic link (`lstat`).
    static func passesThroughLink(_ path: String, below base: String) -> Bool {
        var current = path
        while current.count > base.count, current.hasPrefix(base) {
            var info = stat()
            guard lstat(current, &info) == 0 else { return true }
            if info.st_mode & S_IFMT == S_IFLNK { return true }
            current = String(current[..<(current.lastIndex(of: "/") ?? current.startIndex)])
        }
        return false
    }

    // MARK: Shared

    /// Runs a tokenizer over the chunks `produce` hands to `feed`, then ends the document.
    static func parse<H: XMLTokenHandler>(into handler: inout H, _ produce: ((Data) throws -> Void) throws -> Void) throws {
        var tokenizer = XMLTokenizer()
        try produce { data in try data.withUnsafeBytes { try tokenizer.feed($0, final: false, handler: &handler) } }
        try tokenizer.feed(UnsafeRawBufferPointer(start: nil, count: 0), final: true, handler: &handler)
    }

    /// Hands a file's contents to `body` in chunks of `chunkSize`.
    static func readChunks(_ handle: FileHandle, _ body: (Data) throws -> Void) throws {
        while let data = try handle.read(upToCount: chunkSize), !data.isEmpty { try body(data) }
    }

    private func makeHandler(routes: @escaping (RouteReference) -> Void, clinical: ClinicalRecordQueue,
                             tally: @escaping (RejectReason, SourceLocation) -> Void) -> AppleHealthHandler {
        let sink = self.sink
        return AppleHealthHandler(
            emit: { event, nested in
                if case .workout(let w) = event {
                    for r in w.routes {
                        if let p = r.filePath { routes(RouteReference(workoutStart: w.start, path: p, start: r.start ?? w.start, end: r.end ?? w.end)) }
                    }
                }
                // A clinical record waits for its FHIR resource, read once the XML is done.
                if case .genericRecord(let g) = event, clinical.hold(g) { return }
                try sink.emit(event, nested: nested)
            },
            sampleSink: sink,
            reject: { reason, location in
                tally(reason, location)
                sink.reject(1)
            })
    }

    private func finish(handler: AppleHealthHandler, tally: RejectionTally, entry: String) {
        for warning in tally.warnings(entry: entry) { sink.warn(warning) }
        if handler.routePointsSkipped > 0 {
            sink.warn("\(handler.routePointsSkipped) route point(s) without a readable position or time skipped")
        }
        if handler.controlCharactersRemoved > 0 {
            sink.warn("\(handler.controlCharactersRemoved) control character(s) removed from attribute values")
        }
    }

    static func translate(_ error: Error, name: String) -> Error {
        switch error {
        case let e as XMLSyntaxError: ImportError.notWellFormed(path: name, location: e.location, message: "not well-formed XML: " + e.message)
        case let e as AppleHealthHandler.NotAnExport: ImportError.notAnExport(path: name, reason: "its root element is <\(e.root)>, not <HealthData>")
        case let e as ImportError: e
        case let e as SinkFailure: e
        default: ImportError.unreadable(path: name, reason: "\(error)")
        }
    }

    /// macOS metadata and Finder files in zips made on a Mac.
    static func isNoise(_ path: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        return path.hasPrefix("__MACOSX/") || path.contains("/__MACOSX/") || name.hasPrefix("._") || name == ".DS_Store"
    }

    /// The export XML has a localized name (`export.xml`, `exportar.xml`, `Exporter.xml`); the CDA
    /// document and the files in sub-folders are not it.
    static func isExportXMLCandidate(_ path: String) -> Bool {
        let lower = path.lowercased()
        let name = (lower as NSString).lastPathComponent
        return lower.hasSuffix(".xml") && name != "export_cda.xml" && !lower.contains("workout-routes/")
            && !lower.contains("electrocardiograms/") && !name.hasSuffix("_cda.xml")
    }

    /// Whether a `FileReference` path names a file inside the export's `workout-routes/` folder
    /// (`/workout-routes/route_1.gpx`): never `..`, never another folder, so a crafted export
    /// cannot make the import read files beside or above it.
    static func isRouteFilePath(_ path: String) -> Bool {
        let parts = (path.hasPrefix("/") ? path.dropFirst() : Substring(path)).split(separator: "/", omittingEmptySubsequences: false)
        return parts.count >= 2 && parts[0] == "workout-routes"
            && parts.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\0") }
    }

    static func join(_ base: String, _ path: String) -> String {
        let trimmed = path.hasPrefix("/") ? String(path.dropFirst()) : path
        return base.isEmpty ? trimmed : base + "/" + trimmed
    }
}

extension Importer {
    /// The bytes of export XML a file holds, for sizing what an import keeps per record: a zip's
    /// export XML candidates' uncompressed sizes, from its central directory (the zip's own size
    /// undercounts them: exports compress 10 to 25 times); nil when the file is not a readable zip.
    public static func exportXMLBytes(inZipAt path: String) -> Int? {
        guard let archive = try? Archive(url: URL(fileURLWithPath: path), accessMode: .read) else { return nil }
        let sizes = archive.lazy.filter { entry in
            entry.type == .file && !AppleHealthImporter.isNoise(entry.path) && AppleHealthImporter.isExportXMLCandidate(entry.path)
        }.map(\.uncompressedSize)
        let total = sizes.reduce(0) { $0 &+ Int(clamping: $1) }
        return total > 0 ? total : nil
    }
}
