import EventLog
import Foundation
import HealthModel
import SecureMemory
import VaultEvents

/// What `erase` destroyed.
public struct ErasureSummary: Equatable, Sendable {
    /// Categories whose keys were destroyed, sorted.
    public var categories: [String]
    /// Months erased (`YYYY-MM`, or `undated` for the `Me` characteristics), sorted.
    public var months: [String]
    /// Events the destroyed keys sealed.
    public var samplesErased: Int
}

/// Erasure by destroying keys (crypto-shredding). Every category and month of data is sealed
/// under its own random key (`DataLabel`); `erase` destroys the keys of the chosen categories and
/// months. The frames stay in the log, chained, and nothing can open them again, whoever later
/// learns the passphrase. What it cannot reach (backups, bundles already given) is in
/// docs/threat-model.md.
///
/// Steps: count the events the keys sealed; replace the key table with tombstones (the commit
/// point: from here the data is gone); record the `erased` audit event; rebuild the read models
/// in place without the data (deleted rows and the journal overwritten) and move them to a new
/// file under a fresh file key (no block of the old file opens in it); then mark the tombstones as recorded. A crash before that last step is finished
/// by the next writer (`finishInterruptedErasure`), which records the event if it is missing and
/// purges the read models again.
extension Vault {
    /// Destroys the keys of `categories` for the whole months `from`...`to` (every month, and the
    /// undated records, when both are nil). Months with no data of a category are not listed.
    public func erase(categories: [HealthCategory], from: LocalMonth? = nil, to: LocalMonth? = nil, now: Date = Date()) throws -> ErasureSummary {
        guard log.mode == .readWrite else { throw EventLogError.readOnly }
        if let from, let to, to < from { throw VaultError.invalidErasure(reason: "--to \(to) is before --from \(from)") }
        let wanted = Set(categories)
        let chosen = log.dataKeys.filter { key in
            guard key.erasedAt == nil, let label = DataLabel(bytes: key.label), wanted.contains(label.category) else { return false }
            guard let month = label.month else { return from == nil && to == nil }
            return (from.map { month >= $0 } ?? true) && (to.map { month <= $0 } ?? true)
        }
        let ids = Set(chosen.map(\.id))
        let labels = chosen.compactMap { DataLabel(bytes: $0.label) }.sorted()
        // The data events each key seals (definitions aside), counted while they can be read.
        var counts: [UInt32: Int] = [:]
        try log.readFrames(try log.frameSummaries().filter { ids.contains($0.keyID) }) { frame in
            frame.forEachEvent { _, bytes in if !EncodedEvent(bytes).isDefinition { counts[frame.keyID, default: 0] += 1 } }
        }
        let count = counts.values.reduce(0, +)
        let eraseID = RandomBytes.make(8)
        let record = ErasureRecord(at: now, eraseID: eraseID.hex, labels: labels.map(\.description), events: count)
        if !ids.isEmpty {
            try log.destroyKeys(ids, at: now, eraseID: eraseID, events: counts)
            tables.forget(keyIDs: Set(ids))
            try append([.erased(record)])
            try purgeReadModels()
            try moveReadModelsToFreshFile()
            try log.confirmErasure(eraseID)
        }
        return ErasureSummary(categories: record.categories, months: record.months, samplesErased: count)
    }

    /// Categories and months whose keys were destroyed and that hold no live key since.
    func erasedLabels() -> Set<DataLabel> {
        var erased = Set<DataLabel>(), live = Set<DataLabel>()
        for key in log.dataKeys {
            guard let label = DataLabel(bytes: key.label) else { continue }
            if key.erasedAt == nil { live.insert(label) } else { erased.insert(label) }
        }
        return erased.subtracting(live)
    }

    /// Records an erasure whose keys the key table already lost (a crash came between), once:
    /// the log is searched for its audit event first. Runs when a writer opens the vault.
    func finishInterruptedErasure() throws {
        let pending = log.unrecordedErasures
        guard !pending.isEmpty else { return }
        var recorded = Set<String>()
        try forEachAuditEvent { _, event in
            if case .erased(let e) = event { recorded.insert(e.eraseID) }
        }
        for eraseID in pending where !recorded.contains(eraseID.hex) {
            let keys = log.dataKeys.filter { $0.eraseID == eraseID }
            let labels = keys.compactMap { DataLabel(bytes: $0.label) }.sorted().map(\.description)
            let count = keys.reduce(0) { $0 + ($1.erasedEvents ?? 0) }
            let at = keys.first?.erasedAt ?? Date()
            try append([.erased(ErasureRecord(at: at, eraseID: eraseID.hex, labels: labels, events: count))])
        }
        // The read models may still hold what was erased, and the file they were in.
        try purgeReadModels()
        try moveReadModelsToFreshFile()
        for eraseID in pending { try log.confirmErasure(eraseID) }
    }

    /// Catches the read models up through the `erased` event, which removes exactly what the
    /// erased months brought (`ProjectionUpdate`'s purge: the result equals a rebuild), in one
    /// transaction: SQLite's `secure_delete` overwrites the rows it deletes, every page written is
    /// encrypted afresh, and the journal that held the old pages is zeroed before it is removed.
    /// It costs the erased months, not the vault's history.
    private func purgeReadModels() throws {
        _ = try projections()
    }
}
