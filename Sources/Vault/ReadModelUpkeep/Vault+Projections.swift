import EventLog
import Foundation
import Projections
import SecureMemory
import VaultEvents

extension Vault {
    /// Name of the sealed read-model image in the vault directory.
    public static let projectionsFileName = "projections.sealed"
    static let projectionsPurpose: UInt16 = 1
    /// The largest read-model image read back (a ten-year vault's is 133 MB): a crafted or sparse
    /// `projections.sealed` claiming more is rebuilt from the log, not allocated.
    static let projectionImageLimit = 1 << 30

    var projectionsPath: String { directory + "/" + Self.projectionsFileName }

    /// The key the image is sealed under: the master key until the first erasure, then one
    /// derived from it per erasure, so that an image written by a process that still held erased
    /// data (a reader opened before the erase) no longer opens and is rebuilt.
    var projectionImageKey: SecretKey {
        let erasures = Set(log.dataKeys.compactMap(\.eraseID)).count
        return erasures == 0 ? masterKey : masterKey.derive(subkeyID: UInt64(erasures), context: "hverased")
    }

    /// The read models, caught up with everything committed to the log.
    ///
    /// They come from the sealed image in the vault directory when it is usable, and are caught up
    /// from the log position stored with it; a missing, stale, foreign or damaged image is rebuilt
    /// from the log (`projectionNotice` then says why). When anything was applied, the new image is
    /// sealed and written back atomically.
    public func projections() throws -> ReadModels {
        if let cached = cachedProjections, cached.position == log.committed { return cached.models }
        var start: (models: ReadModels, position: LogPosition)? = cachedProjections
        if start == nil { start = loadProjectionImage() }
        if let (models, position) = start {
            do {
                let reached = try catchUp(models, from: position)
                return try keep(models, at: reached, changed: reached != position)
            } catch ProjectionMismatch.logDiffers {
                projectionNotice = "the read models did not match the log; rebuilt them from the log"
            }
        }
        let models = try ReadModels()
        let reached = try catchUp(models, from: nil)
        return try keep(models, at: reached, changed: true)
    }

    /// Drops the read models and replays the whole log into new ones. Returns what it replayed.
    @discardableResult
    public func rebuildProjections() throws -> ProjectionRebuild {
        let clock = ContinuousClock()
        let began = clock.now
        let models = try ReadModels()
        var inputs = 0
        let reached = try catchUp(models, from: nil, counting: &inputs)
        _ = try keep(models, at: reached, changed: true)
        let elapsed = began.duration(to: clock.now)
        return ProjectionRebuild(events: reached.eventCount, inputs: inputs,
                                 seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private func keep(_ models: ReadModels, at position: LogPosition, changed: Bool) throws -> ReadModels {
        if changed {
            // The image is a cache of the log: when it cannot be written (a read-only directory, a
            // full disk), the answer is still right and the next command catches up again.
            do {
                try models.withImage { image in
                    try SealedSnapshot.write(image, purpose: Self.projectionsPurpose, position: position, vaultID: log.vaultID,
                                             masterKey: projectionImageKey, to: projectionsPath, fileSystem: fileSystem)
                }
            } catch {
                projectionNotice = "the read-model image could not be saved (\(error)); the next command catches up from the log"
            }
        }
        cachedProjections = (models, position)
        return models
    }

    private func loadProjectionImage() -> (ReadModels, LogPosition)? {
        SealedSnapshot.removeLeftovers(of: projectionsPath, fileSystem: fileSystem)
        do {
            guard let contents = try SealedSnapshot.read(
                from: projectionsPath, purpose: Self.projectionsPurpose, vaultID: log.vaultID,
                masterKey: projectionImageKey, fileSystem: fileSystem, limit: Self.projectionImageLimit) else { return nil }
            let models = try contents.plaintext.withUnsafeBytes { try ReadModels(image: $0) }
            guard try models.position == contents.position.encoded else {
                projectionNotice = "the read-model image's position does not match its header; rebuilt it from the log"
                return nil
            }
            return (models, contents.position)
        } catch {
            projectionNotice = "the read-model image could not be used (\(error)); rebuilt it from the log"
            return nil
        }
    }

    private func catchUp(_ models: ReadModels, from position: LogPosition?) throws -> LogPosition {
        var ignored = 0
        return try catchUp(models, from: position, counting: &ignored)
    }

    /// Applies the events after `position` (all of them when nil) in one read-model transaction
    /// that also records the position reached.
    private func catchUp(_ models: ReadModels, from position: LogPosition?, counting inputs: inout Int) throws -> LogPosition {
        if let position, position == log.committed { return position }
        var reached = log.genesis
        var count = 0
        try models.update { update in
            var feed = ProjectionFeed()
            func apply(_ event: VaultEvent) throws {
                if let input = feed.input(for: event) {
                    try update.add(input)
                    count += 1
                }
            }
            if let position {
                reached = try scanTail(after: position) { _, event in try apply(event) }
            } else {
                reached = try scanLog { _, event in try apply(event) }
            }
            return reached.encoded
        }
        inputs = count
        return reached
    }
}

extension Vault {
    /// Decodes the events after `position` (a position this log passed through, else
    /// `ProjectionMismatch.logDiffers`); each key met in the tail first learns its definitions from
    /// its own frames up to the position: catching up costs the tail and the keys it touches.
    func scanTail(after position: LogPosition, _ body: (UInt64, VaultEvent) throws -> Void) throws -> LogPosition {
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
            try frame.forEachEvent { index, bytes in
                if let event = try decoder.decode(bytes, index: index) { try body(index, event) }
            }
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
    /// Sequence, event count and offset (8 bytes each, little-endian), then the chain hash.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        for v in [sequence, eventCount, offset] {
            withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes + chainHash
    }
}
