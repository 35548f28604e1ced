/// An open commit on an `EventLog`: events added to it become durable together when the log
/// commits it, or not at all. Made by `EventLog.beginTransaction()`.
public struct LogTransaction {
    let log: ObjectIdentifier
    /// Events not yet written, one batch per key that will seal them.
    private(set) var batches: [EventBatch] = []
    /// The key of each batch, and the batch of each key.
    private(set) var keys: [UInt32] = []
    private var slots: [UInt32: Int] = [:]
    /// The last key appended to and its slot: imports come in long runs of one key.
    private var last: (key: UInt32, slot: Int)?
    /// The keys appended to just before `last`, most recent first: a FIT activity's records
    /// alternate three or four categories' keys sample by sample, and a dictionary lookup hashed
    /// each one.
    private var recent: [(key: UInt32, slot: Int)] = []
    /// Bytes held in `batches`, all keys together.
    var pendingBytes = 0

    init(log: ObjectIdentifier) {
        self.log = log
    }

    /// The slot of `key`'s batch, made on first use.
    mutating func slot(of key: UInt32) -> Int {
        if let last, last.key == key { return last.slot }
        let slot: Int
        if let i = recent.firstIndex(where: { $0.key == key }) {
            slot = recent[i].slot
            recent.remove(at: i)
        } else if let existing = slots[key] {
            slot = existing
        } else {
            slot = batches.count
            slots[key] = slot
            keys.append(key)
            batches.append(EventBatch())
        }
        if let last {
            if recent.count == 4 { recent.removeLast() }
            recent.insert(last, at: 0)
        }
        last = (key, slot)
        return slot
    }

    /// Whether an event was appended under `key` lately (the last one's key, or a recent one's).
    func isRecent(_ key: UInt32) -> Bool { last?.key == key || recent.contains { $0.key == key } }

    /// Adds one event to `key`'s batch and returns the batch's size.
    mutating func append(_ event: UnsafeRawBufferPointer, key: UInt32) throws -> Int {
        let slot = slot(of: key)
        let before = batches[slot].byteCount
        try batches[slot].append(event)
        let size = batches[slot].byteCount
        pendingBytes += size - before
        return size
    }

    /// Calls `body` with the events gathered for `key` (empty when none), without copying them.
    func withBatch<R>(of key: UInt32, _ body: (EventBatch) throws -> R) rethrows -> R {
        if let slot = slots[key] { return try body(batches[slot]) }
        return try body(EventBatch())
    }

    /// Empties `key`'s batch once it is written. The batch being filled keeps its storage for
    /// the events to come; any other gives it back, so that a transaction over a thousand
    /// category-months does not hold a frame's worth of memory for each.
    mutating func clear(_ key: UInt32) {
        guard let slot = slots[key] else { return }
        pendingBytes -= batches[slot].byteCount
        if last?.key == key { batches[slot].removeAll() } else { batches[slot] = EventBatch() }
    }

    /// Drops every pending event.
    mutating func clearAll() {
        for slot in batches.indices { batches[slot].removeAll() }
        pendingBytes = 0
        last = nil  // a rollback takes back the keys it made: the next append checks its key again
        recent = []
    }

    /// Replaces `key`'s batch (a whole batch appended at once).
    mutating func set(_ batch: EventBatch, for key: UInt32) {
        let slot = slot(of: key)
        pendingBytes += batch.byteCount - batches[slot].byteCount
        batches[slot] = batch
    }

    /// Keys with events pending, in id order.
    var pendingKeys: [UInt32] {
        zip(keys, batches).filter { !$0.1.isEmpty }.map(\.0).sorted()
    }
}
