/// An open commit on an `EventLog`: events added to it become durable together when the log
/// commits it, or not at all. Made by `EventLog.beginTransaction()`.
public struct LogTransaction {
    let log: ObjectIdentifier
    var pending = EventBatch()

    init(log: ObjectIdentifier) {
        self.log = log
    }
}
