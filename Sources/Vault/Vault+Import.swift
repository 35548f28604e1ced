import EventLog
import Foundation
import Importers
import Projections
import VaultEvents

extension Vault {
    /// Imports files in one commit: all of them, or, if any fails, none. Data the vault already
    /// holds is counted as duplicates and not added again.
    ///
    /// - Parameter progress: called with the file, bytes read and bytes in all (uncompressed).
    /// - Parameter timeZone: where times written without an offset (companion JSON, CSV) were local.
    /// - Parameter allowErased: take data of categories and months that were erased (refused and
    ///   counted as `erased` otherwise).
    public func importFiles(_ paths: [String], timeZone: TimeZone = .current, allowErased: Bool = false,
                            progress: @escaping (String, Int64, Int64) -> Void = { _, _, _ in }) throws -> ImportReport {
        let paths = try paths.flatMap { try Self.deviceFolderFiles($0) ?? [$0] }
        // Companion posts replace what the same source posted for the same time: read oldest
        // first (by the file's modification time), so the newest value is the one kept whatever
        // order they were named in; other files keep the order given.
        let files = Self.postsOldestFirst(try paths.map { (path: $0, format: try ImportFormat.detect($0)) })
        // Sized for the vault and the files up front (Apple's XML runs ~400 bytes a record; a zip
        // by its export XML's size in its directory, else at ten times its own; a FIT file ~10
        // bytes an event, a 1 Hz record of 20 to 30 bytes giving two or three), so the table does
        // not grow with old and new alive.
        let expectedNew = files.reduce(0) { total, file in
            let bytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            switch file.format {
            case .appleHealthZip: return total + (Importer.exportXMLBytes(inZipAt: file.path) ?? bytes * 10) / 400
            case .fit: return total + bytes / 10
            default: return total + bytes / 400
            }
        }
        // An import of FIT files alone holds one file's messages at a time, where an export's holds
        // its inflater and XML buffers: its table may take four times the slots (32 MiB), so that a
        // year of 1 Hz activities and daily monitoring files (~2.1 million events) stays in memory
        // and feeds the read models. The bench's folder of 545 files, three runs each before the
        // identity lookups were prefetched: 1.95-2.15 s with twice the slots (1.46 million in
        // memory, the rest through scratch files), 1.85-1.94 s with four times; peak RSS 89-92 MiB,
        // the key derivation's 64 MiB most of it (docs/benchmarks.md, "FIT import"). An Apple
        // export's ten years took 5 MiB more at their peak with a larger table (96-97 MiB,
        // docs/benchmarks-history.md "FIT import"): not for them.
        let budget = files.allSatisfy { $0.format == .fit } ? importIdentityBudgetSlots * 4 : importIdentityBudgetSlots
        // Where the session would append events it holds no value of (see ImportReadModelFeed),
        // the read models catch up from the log after the commit: companion JSON, whose values
        // the upsert rule decides at the commit. Else they are caught up now, and fed (events
        // set aside outside memory too, when the external deduplicator decides them).
        let feeds = feedsReadModelsDuringImport && !files.contains { $0.format == .companionJSON }
        // The read models are caught up first either way, so that what they gain after the commit
        // (the rewrites they count) is this import's alone.
        let caughtUpBefore = feedsReadModelsDuringImport ? try? projections() : nil
        let models = feeds ? caughtUpBefore : nil
        importFedReadModels = false
        let session = try startImportSession(expectingNew: expectedNew, budget: budget)
        session.revisionBudget = importRevisionBudget
        session.erasedLabels = erasedLabels()
        session.allowErased = allowErased
        var report = ImportReport()
        var committed: LogPosition?
        let importAll = {
            report = try self.importAll(files, into: session, timeZone: timeZone, progress: progress)
            committed = try session.commit()
        }
        guard let models else {
            try withRollback(of: session, importAll)
            if feedsReadModelsDuringImport { report.rewrites = rewritesCaughtUp() }
            return report
        }
        do {
            // The read models follow the import in a transaction of their own, committed after
            // the log's: the session applies each event's input as it appends it.
            // An import whose identities go out of memory feeds its read models while the
            // external deduplicator's runs are in memory too: SQLite's cache is halved for it
            // (the ten-year import's peak went from 90 to 106 MiB with the full cache, 97 with half).
            // Decided from the size expected: a first import into months the vault does not hold
            // keeps few identities (`ImportSession.addUnremembered`) and stays in memory, with the
            // smaller cache all the same.
            let external = expectedNew * 10 / 7 >= budget
            try models.update(cacheKiB: external ? ReadModels.cacheKiB / 2 : nil) { update in
                try withUnsafeMutablePointer(to: &update) { pointer in
                    let feed = ImportReadModelFeed(update: pointer)
                    session.readModelFeed = feed
                    defer {
                        session.readModelFeed = nil
                        feed.close()
                    }
                    try withRollback(of: session, importAll)
                    try feed.finish()
                }
                guard let committed else { throw ImportReadModelFeed.Abandoned() }
                try restateDiscreteDays(&update, models: models)
                return committed.encoded
            }
            if let committed {
                cachedProjections = (models, committed)
                importFedReadModels = true
                report.rewrites = models.rewritesInLastUpdate
            }
        } catch {
            // Before the log's commit, the import failed: nothing of it is anywhere. After it, the
            // samples are in the log, and the read models, still at their old position, catch up
            // from it (`refreshProjections`).
            if committed == nil { throw error }
            // The feed was abandoned (or the read models failed) after the commit.
            report.rewrites = rewritesCaughtUp()
        }
        return report
    }

    /// Catches the read models up with the import just committed and returns the rewrites that
    /// brought (they were caught up before it, so these are the import's). A failure is the next
    /// command's to repair (the import is committed; `refreshProjections` reports it): 0 then.
    private func rewritesCaughtUp() -> Int {
        (try? projections())?.rewritesInLastUpdate ?? 0
    }

    /// `files` with its companion posts reordered among their own places, oldest first by
    /// modification time (stable on a tie).
    static func postsOldestFirst(_ files: [(path: String, format: ImportFormat)]) -> [(path: String, format: ImportFormat)] {
        let places = files.indices.filter { files[$0].format == .companionJSON }
        // Each file's time read once, not at every comparison.
        func modified(_ path: String) -> Date {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast
        }
        let times = places.map { modified(files[$0].path) }
        let posts = places.indices.sorted { a, b in times[a] != times[b] ? times[a] < times[b] : a < b }.map { files[places[$0]] }
        var ordered = files
        for (place, post) in zip(places, posts) { ordered[place] = post }
        return ordered
    }

    /// Reads every file into the session and returns what each brought. The parser runs on this
    /// thread, the session (identities, encoding, frames) on another, for all the files: a file
    /// is ended there while the next is parsed here (a device folder of 180 small FIT files had
    /// each thread wait for the other at every file's end).
    private func importAll(_ files: [(path: String, format: ImportFormat)], into session: ImportSession, timeZone: TimeZone,
                           progress: @escaping (String, Int64, Int64) -> Void) throws -> ImportReport {
        var report = ImportReport()
        let pipeline = PipelinedSink(target: session)
        do {
            for (index, (path, format)) in files.enumerated() {
                let isLast = index == files.count - 1
                pipeline.perform {
                    session.startFile(path: path, format: format.rawValue, isLast: isLast)
                    // Companion JSON follows the upsert rule per source, as posts to `serve` do.
                    session.revisable = format == .companionJSON
                }
                try Importer.importFile(path, format: format, into: pipeline, timeZone: timeZone) { progress(path, $0, $1) }
                pipeline.perform {
                    for file in try session.finishFile(displayName: (path as NSString).lastPathComponent, isLast: isLast) {
                        try report.add(file)
                    }
                }
            }
            try pipeline.finish()
        } catch {
            pipeline.cancel()
            // What the session failed on belongs to an earlier file than what the parser did.
            throw pipeline.workerFailure ?? error
        }
        return report
    }

    /// Runs `body`; when it throws, the session's transaction is rolled back and the ids its
    /// encoders assigned are forgotten (they never reached the log).
    private func withRollback(of session: ImportSession, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            session.rollback()
            tables.reset()
            throw error
        }
    }

    /// An import session continuing each data key's tables, which learns the identities of a
    /// category-month's events the first time the import meets it: importing one sample reads that
    /// month's frames of its category, not the vault's history.
    func startImportSession(expectingNew: Int = 0, budget: Int? = nil) throws -> ImportSession {
        try ImportSession(log: log, tables: tables, expected: expectingNew,
                          scratchDirectory: directory, memoryBudgetSlots: budget ?? importIdentityBudgetSlots)
    }
}

extension Vault {
    /// The FIT folders a device shows when plugged in (`GARMIN/Activity`, `Monitor`, `Sleep`,
    /// `Weight`, any case).
    static let deviceFolders = ["activity", "monitor", "sleep", "weight"]

    /// The `.fit` files of a device's folder (`vaultctl import /media/GARMIN/GARMIN`), in its
    /// subfolders' and names' order; nil for a path that is not a directory holding one of them.
    static func deviceFolderFiles(_ path: String) throws -> [String]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
        let folders = try FileManager.default.contentsOfDirectory(atPath: path).filter { deviceFolders.contains($0.lowercased()) }.sorted()
        guard !folders.isEmpty else { return nil }
        var files: [String] = []
        for folder in folders {
            let names = try FileManager.default.contentsOfDirectory(atPath: path + "/" + folder).filter { $0.lowercased().hasSuffix(".fit") }
            files += names.sorted().map { path + "/" + folder + "/" + $0 }
        }
        guard !files.isEmpty else { throw ImportError.unreadable(path: path, reason: "a device folder without a .fit file in \(folders.joined(separator: ", "))") }
        return files
    }
}

extension ImportReport {
    /// Adds a file's report to the command's; a file of which nothing could be read fails the
    /// import, as a file that is not one does.
    fileprivate mutating func add(_ file: FileImportReport) throws {
        if file.rejected > 0, file.added + file.duplicates + file.erased + file.replaced + file.repeats == 0 {
            throw ImportError.nothingImportable(path: file.path, rejected: file.rejected, reasons: file.warnings.filter { $0.contains("rejected") })
        }
        files.append(file)
        added += file.added
        duplicates += file.duplicates
        rejected += file.rejected
        erased += file.erased
        replaced += file.replaced
    }
}
