import EventLog
import Foundation
import Importers
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
        // Sized for the vault and the files up front (Apple's XML runs ~400 bytes a record; zips
        // are counted at ten times their size), so the table does not grow with old and new alive.
        let expectedNew = paths.reduce(0) { total, path in
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            return total + (path.lowercased().hasSuffix(".zip") ? bytes * 10 : bytes) / 400
        }
        let session = try startImportSession(expectingNew: expectedNew)
        session.revisionBudget = importRevisionBudget
        session.erasedLabels = erasedLabels()
        session.allowErased = allowErased
        var report = ImportReport()
        do {
            for path in paths {
                let format = try ImportFormat.detect(path)
                session.startFile(path: path, format: format.rawValue)
                // Companion JSON follows the upsert rule per source, as posts to `serve` do.
                session.revisable = format == .companionJSON
                // The parser on this thread, the session (identities, encoding, frames) on another.
                let pipeline = PipelinedSink(target: session)
                pipeline.start()
                do {
                    try Importer.importFile(path, format: format, into: pipeline, timeZone: timeZone) { progress(path, $0, $1) }
                    try pipeline.finish()
                } catch {
                    pipeline.cancel()
                    throw error
                }
                let file = try session.finishFile(displayName: (path as NSString).lastPathComponent)
                report.files.append(file)
                report.added += file.added
                report.duplicates += file.duplicates
                report.rejected += file.rejected
                report.erased += file.erased
                report.replaced += file.replaced
            }
            try session.commit()
        } catch {
            session.rollback()
            // The encoders assigned ids that never reached the log.
            tables.reset()
            throw error
        }
        return report
    }

    /// An import session continuing each data key's tables, which learns the identities of a
    /// category-month's events the first time the import meets it: importing one sample reads that
    /// month's frames of its category, not the vault's history.
    func startImportSession(expectingNew: Int = 0) throws -> ImportSession {
        try ImportSession(log: log, tables: tables, expected: expectingNew,
                          scratchDirectory: directory, memoryBudgetSlots: importIdentityBudgetSlots)
    }
}
