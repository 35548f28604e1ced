import EventLog
import Foundation
import HealthModel
import Projections
import SecureMemory
import VaultEvents

extension Vault {
    /// Name of the read models' database file in the vault directory, encrypted page by page
    /// (docs/projections.md); SQLite's journal beside it (`-journal`) is encrypted the same way.
    public static let projectionsFileName = "projections.db"
    /// The whole-image file projection format 1 sealed (before page encryption): zeroed and
    /// removed when met, the database file is built from the log instead.
    static let legacyProjectionImageName = "projections.sealed"

    var projectionsPath: String { directory + "/" + Self.projectionsFileName }

    /// The key the read models' pages are encrypted under, derived from the master key.
    var projectionKey: SecretKey { Self.projectionKey(masterKey) }

    static func projectionKey(_ masterKey: SecretKey) -> SecretKey { masterKey.derive(subkeyID: 1, context: "hvreadmd") }

    /// For `verify`: every page of the read models' file authenticated under its key. A page that
    /// fails is one of another file put in (an older copy's block spliced back, say) or damage; no
    /// crash leaves one (SQLite's journal rolls a torn write back). Commands rebuild such a file
    /// from the log; `verify` names it. Nil when the file is sound or absent.
    ///
    /// The file is also compared, table by table, with read models rebuilt in memory from the log
    /// (a file behind the log is copied into memory and caught up first, the file itself left as
    /// it is): an earlier version of one of its own blocks put back authenticates, but does not
    /// say what the log says.
    ///
    /// - Parameter erasuresInLog: the erase ids (hex) of the `erased` events the log holds.
    func readModelProblem(erasuresInLog: Set<String>) -> String? {
        let path = projectionsPath
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let file: ReadModels
        do {
            file = try ReadModels(path: path, key: projectionKey)
            // A copy in memory is made below only when the file must be caught up, so that no copy
            // is held beside the rebuild's database otherwise.
            try file.checkEveryPage()
        } catch {
            return "\(path): the read models do not authenticate (\(error)): a block of another file or time was put in, or the file is damaged; "
                + "the next command rebuilds them from the log"
        }
        do {
            // Nothing to compare before the first catch-up, nor when a writer committed and caught
            // the file up after this view of the log was taken (the next verify sees it).
            guard let bytes = try file.position else { return nil }
            if let stored = LogPosition(encoded: bytes), stored.sequence > log.committed.sequence { return nil }
            // A copy caught up to the log when the file is behind it, and also when an erase was cut
            // between destroying its keys and recording its audit event: every command purges such
            // an erasure's months before it answers (`catchUp`), so the file is compared as they
            // see it. (Rows that purge rewrites are compared as rewritten: an old block confined to
            // them is not named, and the next command rewrites them.) Once the event is in the log,
            // the erase purged the file before it, and the file is compared as it is.
            let cutBeforeItsEvent = log.unrecordedErasures.contains { !erasuresInLog.contains($0.hex) }
            let current = bytes == log.committed.encoded && !cutBeforeItsEvent ? file : try file.inMemoryCopy()
            if current !== file { _ = try catchUp(current) }
            let rebuilt = try ReadModels()
            try rebuild(rebuilt)
            cachedProjections = nil
            let have = try current.canonicalContents(), want = try rebuilt.canonicalContents()
            let differing = want.keys.filter { have[$0] != want[$0] }.sorted()
            guard !differing.isEmpty else { return nil }
            return "\(path): the read models differ from the log in \(differing.joined(separator: ", ")): "
                + "a block of an earlier state was put back, or a faulty write; `vaultctl rebuild` makes them anew from the log"
        } catch ProjectionMismatch.logDiffers {
            return "\(path): the read models' stored position is not on this log: they are from another time or vault; the next command rebuilds them"
        } catch {
            return "\(path): the read models could not be compared with the log (\(error))"
        }
    }

    /// The read models, caught up with everything committed to the log.
    ///
    /// They come from the database file in the vault directory and are caught up from the log
    /// position stored in it, in one transaction; a missing, foreign, stale or damaged file is
    /// rebuilt from the log (`projectionNotice` then says why).
    public func projections() throws -> ReadModels {
        if let cached = cachedProjections, cached.position == log.committed { return cached.models }
        let models = try cachedProjections?.models ?? openProjectionStore()
        do {
            let reached = try catchUp(models)
            cachedProjections = (models, reached)
            return models
        } catch ProjectionMismatch.logDiffers {
            projectionNotice = "the read models did not match the log; rebuilt them from the log"
        } catch let error as any StoredDataError where error.isDamage {
            projectionNotice = "the read models could not be read (\(error)); rebuilt them from the log"
            cachedProjections = nil
            try? ReadModels.removeFiles(at: projectionsPath)
            _ = try rebuildProjections()
            return cachedProjections!.models
        }
        _ = try rebuild(models)
        return models
    }

    /// Runs `body` over the caught-up read models; when it meets a damaged page, the read models
    /// are rebuilt from the log and `body` runs once more.
    func withReadModels<T>(_ body: (ReadModels) throws -> T) throws -> T {
        do {
            return try body(try projections())
        } catch let error as any StoredDataError where error.isDamage {
            projectionNotice = "the read models could not be read (\(error)); rebuilt them from the log"
            cachedProjections = nil
            try ReadModels.removeFiles(at: projectionsPath)
            _ = try rebuildProjections()
            return try body(try projections())
        }
    }

    /// Empties the read models and replays the whole log into them, in one transaction. Returns
    /// what it replayed.
    @discardableResult
    public func rebuildProjections() throws -> ProjectionRebuild {
        let models = try cachedProjections?.models ?? openProjectionStore()
        return try rebuild(models)
    }

    @discardableResult
    private func rebuild(_ models: ReadModels) throws -> ProjectionRebuild {
        let clock = ContinuousClock()
        let began = clock.now
        var inputs = 0
        var reached = log.genesis
        try models.rebuild { update in
            (reached, inputs) = try applyInputs(scan: { try self.scanLog($0) }) { try update.add($0) }
            try restateDiscreteDays(&update, models: models)
            return reached.encoded
        }
        cachedProjections = (models, reached)
        let elapsed = began.duration(to: clock.now)
        return ProjectionRebuild(events: reached.eventCount, inputs: inputs,
                                 seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Opens the database file, creating it when missing; a file that does not open (another
    /// format, another key, damaged) is wiped and made anew, with a notice. Where the directory
    /// cannot be written, the read models are built in memory for this command.
    private func openProjectionStore() throws -> ReadModels {
        removeLegacyProjectionImage()
        do {
            return try ReadModels(path: projectionsPath, key: projectionKey)
        } catch let error as any StoredDataError {
            if fileSystem.exists(projectionsPath) {
                projectionNotice = "the read models could not be used (\(error)); rebuilt them from the log"
                do {
                    try ReadModels.removeFiles(at: projectionsPath)
                    return try ReadModels(path: projectionsPath, key: projectionKey)
                } catch {}
            }
            projectionNotice = "the read models could not be saved (\(error)); built them in memory for this command"
            return try ReadModels()
        }
    }

    /// Zeroes and removes the whole-image file of projection format 1 and its leftovers, and a
    /// fresh copy of the read models that a crash kept from replacing the file.
    private func removeLegacyProjectionImage() {
        guard let names = try? fileSystem.contentsOfDirectory(directory) else { return }
        for name in names where name == Self.legacyProjectionImageName || name.hasPrefix(Self.legacyProjectionImageName + ".tmp.") {
            try? ReadModels.removeFiles(at: directory + "/" + name)
        }
        if names.contains(Self.projectionsFileName + ReadModels.freshFileSuffix) {
            try? ReadModels.removeFiles(at: projectionsPath + ReadModels.freshFileSuffix)
        }
    }

    /// Moves the caught-up read models to a new file (a new random salt, so a new file key), so
    /// that no block of the file as it was before, kept by someone and spliced back in (the
    /// block holding the stored log position, say), authenticates after it. Done by every
    /// erasure once the read models lost the erased months.
    func moveReadModelsToFreshFile() throws {
        guard fileSystem.exists(projectionsPath) else { return }
        let models = try projections()
        try models.moveToFreshFile(replacing: projectionsPath)
        cachedProjections = nil
    }

    /// Applies the events after the position stored in `models` (all of them when none) in one
    /// transaction that also records the position reached. The stored position is read under the
    /// write lock, so two processes catching up at once apply the tail once.
    private func catchUp(_ models: ReadModels) throws -> LogPosition {
        var reached = log.committed
        // Keys an erase destroyed whose audit event a crash kept out of the log (the next writer
        // adds it): their months go from the read models now, before anything is answered.
        let unrecorded = Set(log.unrecordedErasures)
        let pendingErasure = ProjectionFeed.erasedMonths(labels: log.dataKeys.filter { key in
            key.eraseID.map { unrecorded.contains($0) } ?? false
        }.map { String(decoding: $0.label, as: UTF8.self) })
        try models.update { update in
            if !pendingErasure.isEmpty { try update.add(.erased(pendingErasure)) }
            guard let bytes = try models.position else {
                reached = try applyInputs(scan: { try self.scanLog($0) }) { try update.add($0) }.position
                try restateDiscreteDays(&update, models: models)
                return reached.encoded
            }
            guard let stored = LogPosition(encoded: bytes) else { throw ProjectionMismatch.logDiffers }
            if stored == log.committed { return pendingErasure.isEmpty ? nil : bytes }
            if stored.sequence > log.committed.sequence {
                // Another process appended and caught the file up after this one opened the log:
                // the read models are newer than this view of it. A writer holds the log's lock,
                // so for it this can only mean a log rolled back under the file.
                if log.mode == .readWrite { throw ProjectionMismatch.logDiffers }
                return pendingErasure.isEmpty ? nil : bytes
            }
            reached = try applyInputs(scan: { try self.scanTail(after: stored, $0) }) { try update.add($0) }.position
            try restateDiscreteDays(&update, models: models)
            return reached.encoded
        }
        return reached
    }

    /// Gives the update the readings of the discrete metric-days replaced samples left: the
    /// samples of that category-month's key, but for those replaced, read from the log.
    func restateDiscreteDays(_ update: inout ProjectionUpdate, models: ReadModels) throws {
        var superseded: [Int64: Int]?
        try update.restateDiscreteDays { metric, unit, day in
            let label = DataLabel(category: HealthCategory.of(type: metric), month: LocalMonth(day))
            guard let key = log.dataKeys.first(where: { $0.erasedAt == nil && DataLabel(bytes: $0.label) == label }) else { return [] }
            if superseded == nil { superseded = try models.supersededSamples() }
            var skipping = SampleContent.Skipping(superseded ?? [:])
            var feed = ProjectionFeed()
            var values: [Double] = []
            let decoder = EventDecoder()
            try log.readFrames(try tables.frames().filter { $0.keyID == key.id }) { frame in
                try frame.forEachEvent { index, bytes in
                    guard let event = try decoder.decode(bytes, index: index), case .sample(let sample) = event, sample.type == metric,
                          case .discrete(let reading)? = feed.input(for: event)?.withoutMetadata, reading.unit == unit,
                          LocalDay(instant: reading.start, utcOffset: reading.utcOffset) == day, !skipping.skips(sample) else { return }
                    values.append(reading.value)
                }
            }
            return values
        }
    }
}

extension Vault {
    /// Reads the events after `position` (a position this log passed through, else
    /// `ProjectionMismatch.logDiffers`), as `scanLog` does; each key met in the tail first learns
    /// its definitions from its own frames up to the position: catching up costs the tail and the
    /// keys it touches.
    func scanTail(after position: LogPosition, _ body: (EventDecoder, UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> LogPosition {
        guard position.sequence <= log.committed.sequence, position.offset <= log.committed.offset else {
            throw ProjectionMismatch.logDiffers
        }
        var decoders = KeyScopedTables.Decoders()
        var reader: LogReader
        do {
            reader = try log.reader(from: position)
        } catch let error as EventLogError {
            // The position is not one of this log's frame boundaries.
            if case .damaged = error { throw ProjectionMismatch.logDiffers }
            throw error
        }
        var first = true
        while true {
            let next: LogFrame?
            do {
                next = try reader.next()
            } catch EventLogError.damaged where first {
                // The first frame after the position does not follow it: the position is another
                // log's (or this log's before a rollback). A rebuild reads from the start, and
                // reports the damage if that is what it was.
                throw ProjectionMismatch.logDiffers
            }
            guard let frame = next else { break }
            first = false
            if !decoders.has(frame.keyID) { decoders.set(try tables.decoder(for: frame.keyID, through: position), for: frame.keyID) }
            let decoder = decoders.decoder(for: frame)
            try frame.forEachEvent { index, bytes in try body(decoder, index, bytes) }
        }
        return reader.position
    }
}

/// What `rebuildProjections` replayed.
public struct ProjectionRebuild: Sendable {
    /// Log entries read (events and definitions).
    public var events: UInt64
    /// Events that fed the read models (samples, summaries, goals, source orders).
    public var inputs: Int
    public var seconds: Double
}

/// The read models' stored position is not a position of this log (rolled back, replaced or
/// another vault's image): they are rebuilt.
enum ProjectionMismatch: Error {
    case logDiffers
}

extension LogPosition {
    /// Reads `encoded`'s form back; nil when the bytes are not one.
    init?(encoded bytes: [UInt8]) {
        guard bytes.count > 24 else { return nil }
        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        self.init(sequence: word(0), eventCount: word(8), offset: word(16), chainHash: Array(bytes[24...]))
    }

    /// Sequence, event count and offset (8 bytes each, little-endian), then the chain hash.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        for v in [sequence, eventCount, offset] {
            withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes + chainHash
    }
}
