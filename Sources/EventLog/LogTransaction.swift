/// An open commit on an `EventLog`: events added to it become durable together when the log
/// commits it, or not at all. Made by `EventLog.beginTransaction()`.
public struct LogTransaction {
    let log: ObjectIdentifier
    /// Events not yet written, by the key that will seal them.
    var batches: [UInt32: EventBatch] = [:]
    /// Bytes held in `batches`, all keys together.
    var pendingBytes = 0

    init(log: ObjectIdentifier) {
        self.log = log
    }
}
