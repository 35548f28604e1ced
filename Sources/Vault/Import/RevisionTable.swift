import BinaryCoding
import EventLog
import HealthModel
import VaultEvents

/// The upsert rule for what companion apps post (and `import` of companion JSON files): one live
/// value per metric, source and time range. A value posted again for the same slot is a
/// duplicate; another value replaces the live one, recorded as a `sampleSuperseded` event naming
/// the replaced event, then the new sample.
///
/// Slots compare within one data key (a category-month): a sample's type and source ids are its
/// key's own, and its label follows from its start. Committed quantity samples of a key (of every
/// source: apps posting at once share the read) are read from the key's frames the first time a
/// post touches it (in the session's own pass over them, `beginLearning`, else `offer`'s
/// `readKey`), and learned
/// from each commit's own frames afterwards (`learn`), so a long-running server reads a month
/// once. Each is held as 64-bit hashes of its slot and value and its log index (about 50 bytes);
/// the replaced event's bytes are read back from its frame when a supersession is written, and
/// its slot compared in full there. New values wait in `pending` until the commit, so that a
/// replaced sample is always a committed one, with its log index known; two values for one slot
/// in one commit keep the last. (The index holds in the log that wrote the supersession; readers
/// elsewhere match the replaced sample by its content, `SampleContent`.)
struct RevisionTable {
    struct Slot: Hashable {
        var keyID: UInt32
        /// FNV-1a of the value kind, type, source and span, as encoded.
        var hash: UInt64
    }

    struct Committed {
        var index: UInt64
        /// FNV-1a of the value and unit, as encoded.
        var value: UInt64
    }

    struct Pending {
        var event: [UInt8]
        var slotEnd: Int
        var value: UInt64
        /// The committed sample it replaces, taken when the value came (the table may forget
        /// committed samples before the commit).
        var replaces: Committed?
    }

    enum Outcome: Equatable {
        case added, replaced, duplicate
    }

    /// Committed samples by the UTC day they start in: past its budget the table lets the oldest
    /// days go whole (`shed`).
    private var committed: [Int64: [Slot: Committed]] = [:]
    /// Samples in `committed`.
    private var held = 0
    /// Keys whose committed samples are in `committed`.
    private var loaded: Set<UInt32> = []
    /// Of the keys held, the time before which their samples may have been let go (`shed`): a
    /// sample that starts earlier has the key read again.
    private var horizon: [UInt32: Int64] = [:]
    private(set) var pending: [Slot: Pending] = [:]
    private var pendingOrder: [Slot] = []

    /// Samples held for their slots; past twice this the table lets the oldest days go and reads
    /// a key again when an older sample comes, so that a server running for months stays bounded
    /// (about 40 MB).
    var committedBudget = 400_000

    /// Decides what a new quantity sample does. `readKey` shows every committed event of a key
    /// with its index (called once per key while it is remembered).
    mutating func offer(_ event: [UInt8], keyID: UInt32,
                        readKey: (UInt32, (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Outcome {
        guard let place = event.withUnsafeBytes({ EventIdentity.quantitySlot(of: $0) }) else { return .added }
        let slot = Slot(keyID: keyID, hash: FNV1a.hash(event[2..<place.slotEnd]))
        let value = FNV1a.hash(event[place.slotEnd..<place.valueEnd])
        if let waiting = pending[slot] {
            if waiting.value == value { return .duplicate }
            pending[slot] = Pending(event: event, slotEnd: place.slotEnd, value: value, replaces: waiting.replaces)
            return .replaced
        }
        if let since = horizon[keyID], place.start < since {
            // Older than what the table kept of this key: its samples are read again.
            loaded.remove(keyID)
            horizon[keyID] = nil
        }
        if !loaded.contains(keyID) {
            if held > committedBudget { shed() }
            try readKey(keyID) { index, bytes in
                guard let other = EventIdentity.quantitySlot(of: bytes) else { return }
                remember(index: index, bytes: bytes, place: other, keyID: keyID)
            }
            loaded.insert(keyID)
        }
        let live = committed[LocalDay.floorDivide(place.start, 86_400)]?[slot]
        if let live, live.value == value { return .duplicate }
        pending[slot] = Pending(event: event, slotEnd: place.slotEnd, value: value, replaces: live)
        pendingOrder.append(slot)
        return live == nil ? .added : .replaced
    }

    /// The events to append for the pending values, in order: a supersession before each value
    /// that replaces a committed one, whose bytes `fetch` reads back (key id, log index). Empties
    /// `pending`.
    mutating func takePending(fetch: (UInt32, UInt64) throws -> [UInt8]?) throws -> [(keyID: UInt32, event: [UInt8])] {
        var out: [(UInt32, [UInt8])] = []
        for slot in pendingOrder {
            guard let value = pending[slot] else { continue }
            // The replaced event, its slot compared in full (the table holds hashes).
            if let live = value.replaces, let replaced = try fetch(slot.keyID, live.index),
               let place = replaced.withUnsafeBytes({ EventIdentity.quantitySlot(of: $0) }),
               replaced[2..<place.slotEnd].elementsEqual(value.event[2..<value.slotEnd]) {
                var w = EventWriter(kind: .sampleSuperseded)
                w.varint(live.index)
                w.bytes.append(contentsOf: replaced[2...])
                out.append((slot.keyID, w.bytes))
            }
            out.append((slot.keyID, value.event))
        }
        pending = [:]
        pendingOrder = []
        return out
    }

    /// Learns the quantity samples of a commit's frames, for the keys already read. Past twice the
    /// budget (learning adds without reading) the table forgets, before the next commit's offers.
    mutating func endLearning() {
        if held > max(committedBudget * 2, 1_000) { shed() }
    }

    /// Starts holding `keyID`'s committed samples, which the caller shows to `learn` in a pass
    /// over the key's frames it makes anyway (the session's, for the key's identities), so that
    /// `offer` does not read them again; false when they are held already. If the pass fails,
    /// the caller must `forgetCommitted()`.
    mutating func beginLearning(keyID: UInt32) -> Bool {
        guard !loaded.contains(keyID) else { return false }
        if held > committedBudget { shed() }
        loaded.insert(keyID)
        return true
    }

    /// Learns one quantity sample of a commit's frames, when its key is read already.
    mutating func learn(keyID: UInt32, index: UInt64, bytes: UnsafeRawBufferPointer) {
        guard loaded.contains(keyID), let place = EventIdentity.quantitySlot(of: bytes) else { return }
        remember(index: index, bytes: bytes, place: place, keyID: keyID)
    }

    /// Whether any committed samples of `keyID` are held (a commit's frames of other keys are skipped).
    func holds(keyID: UInt32) -> Bool { loaded.contains(keyID) }

    private mutating func remember(index: UInt64, bytes: UnsafeRawBufferPointer, place: (source: UInt64, slotEnd: Int, valueEnd: Int, start: Int64),
                                   keyID: UInt32) {
        let slot = Slot(keyID: keyID, hash: FNV1a.hash(bytes[2..<place.slotEnd]))
        if committed[LocalDay.floorDivide(place.start, 86_400), default: [:]].updateValue(Committed(index: index, value: FNV1a.hash(bytes[place.slotEnd..<place.valueEnd])),
                                                                     forKey: slot) == nil {
            held += 1
        }
    }

    /// Lets the oldest days of the held samples go, whole, until half are left, and notes it for
    /// every key held: what phones re-post (their last hours and days) stays, and a key is read
    /// again only for an older sample. Forgetting everything instead had a server read the month
    /// it writes to again every few hundred thousand samples (stalls of 200-300 ms under a load
    /// generator), and letting samples go one by one took tens of milliseconds (docs/benchmarks-history.md,
    /// issue 39).
    mutating func shed() {
        let target = held / 2
        var days = committed.keys.sorted()
        while held > target, days.count > 1 {
            held -= committed.removeValue(forKey: days.removeFirst())?.count ?? 0
        }
        // One day holds most: nothing older to let go, so everything goes.
        guard held <= target + target / 2, let newest = days.first else { return forgetCommitted() }
        for key in loaded { horizon[key] = max(horizon[key] ?? .min, newest * 86_400) }
    }

    /// Forgets every committed sample read; they are read again when needed.
    mutating func forgetCommitted() {
        committed = [:]
        held = 0
        loaded = []
        horizon = [:]
    }

    /// Drops pending values (a rolled-back commit).
    mutating func dropPending() {
        pending = [:]
        pendingOrder = []
    }
}
