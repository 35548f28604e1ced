import EventLog
import VaultEvents

/// The upsert rule for what companion apps post (and `import` of companion JSON files): one live
/// value per metric, source and time range. A value posted again for the same slot is a
/// duplicate; another value replaces the live one, recorded as a `sampleSuperseded` event naming
/// the replaced event, then the new sample.
///
/// Slots compare within one data key (a category-month): a sample's type and source ids are its
/// key's own, and its label follows from its start. Committed samples of a key and source are
/// read from the key's frames the first time a post touches them (`loadCommitted`), and learned
/// from each commit's own frames afterwards (`learn`), so a long-running server reads a month
/// once. New values wait in `pending` until the commit, so that a replaced sample is always a
/// committed one, with its log index known; two values for one slot in one commit keep the last.
/// (The index holds in the log that wrote the supersession; readers elsewhere match the replaced
/// sample by its content, `SampleContent`.)
struct RevisionTable {
    struct Slot: Hashable {
        var keyID: UInt32
        /// Value kind, type, source and span, as encoded.
        var bytes: [UInt8]
    }

    struct Committed {
        var index: UInt64
        /// The event's bytes, repeated in a supersession.
        var event: [UInt8]
        var valueRange: Range<Int>
    }

    struct Pending {
        var event: [UInt8]
        var valueRange: Range<Int>
        /// The committed sample it replaces, taken when the value came (the table may forget
        /// committed samples before the commit).
        var replaces: Committed?
    }

    enum Outcome: Equatable {
        case added, replaced, duplicate
    }

    /// Committed samples by slot, for the keys and sources read so far.
    private var committed: [Slot: Committed] = [:]
    /// (key, source id) pairs whose committed samples are in `committed`.
    private var loaded: Set<SourceOfKey> = []
    /// Values waiting for the commit, in the order they came.
    private(set) var pending: [Slot: Pending] = [:]
    private var pendingOrder: [Slot] = []

    struct SourceOfKey: Hashable {
        var keyID: UInt32
        var source: UInt64
    }

    /// Samples held for their slots; past this the table forgets what it read and reads again
    /// when needed, so that a server running for months stays bounded.
    static let committedBudget = 400_000

    /// Decides what a new quantity sample does. `readKey` shows every committed event of a key
    /// with its index (called once per key and source).
    mutating func offer(_ event: [UInt8], keyID: UInt32,
                        readKey: (UInt32, (UInt64, UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Outcome {
        guard let place = event.withUnsafeBytes({ EventIdentity.quantitySlot(of: $0) }) else { return .added }
        let slot = Slot(keyID: keyID, bytes: Array(event[2..<place.slotEnd]))
        let value = place.slotEnd..<place.valueEnd
        if let waiting = pending[slot] {
            if waiting.event[waiting.valueRange] == event[value] { return .duplicate }
            pending[slot] = Pending(event: event, valueRange: value, replaces: waiting.replaces)
            return .replaced
        }
        let owner = SourceOfKey(keyID: keyID, source: place.source)
        if !loaded.contains(owner) {
            if committed.count > Self.committedBudget { forgetCommitted() }
            try readKey(keyID) { index, bytes in
                guard let other = EventIdentity.quantitySlot(of: bytes), other.source == place.source else { return }
                remember(index: index, bytes: bytes, place: other, keyID: keyID)
            }
            loaded.insert(owner)
        }
        let live = committed[slot]
        if let live, live.event[live.valueRange] == event[value] { return .duplicate }
        pending[slot] = Pending(event: event, valueRange: value, replaces: live)
        pendingOrder.append(slot)
        return live == nil ? .added : .replaced
    }

    /// The events to append for the pending values, in order: a supersession before each value
    /// that replaces a committed one. Empties `pending`.
    mutating func takePending() -> [(keyID: UInt32, event: [UInt8])] {
        var out: [(UInt32, [UInt8])] = []
        for slot in pendingOrder {
            guard let value = pending[slot] else { continue }
            if let live = value.replaces {
                var w = EventWriter(kind: .sampleSuperseded)
                w.varint(live.index)
                w.bytes.append(contentsOf: live.event[2...])
                out.append((slot.keyID, w.bytes))
            }
            out.append((slot.keyID, value.event))
        }
        pending = [:]
        pendingOrder = []
        return out
    }

    /// Learns the quantity samples of a commit's frames, for the keys and sources already read.
    mutating func learn(keyID: UInt32, index: UInt64, bytes: UnsafeRawBufferPointer) {
        guard let place = EventIdentity.quantitySlot(of: bytes), loaded.contains(SourceOfKey(keyID: keyID, source: place.source)) else { return }
        remember(index: index, bytes: bytes, place: place, keyID: keyID)
    }

    /// Whether any committed samples of `keyID` are held (a commit's frames of other keys are skipped).
    func holds(keyID: UInt32) -> Bool { loaded.contains { $0.keyID == keyID } }

    private mutating func remember(index: UInt64, bytes: UnsafeRawBufferPointer, place: (source: UInt64, slotEnd: Int, valueEnd: Int), keyID: UInt32) {
        let slot = Slot(keyID: keyID, bytes: Array(bytes[2..<place.slotEnd]))
        committed[slot] = Committed(index: index, event: Array(bytes), valueRange: place.slotEnd..<place.valueEnd)
    }

    /// Forgets every committed sample read (the log moved on under another writer, or the budget ran out).
    mutating func forgetCommitted() {
        committed = [:]
        loaded = []
    }

    /// Drops pending values (a rolled-back commit).
    mutating func dropPending() {
        pending = [:]
        pendingOrder = []
    }
}
