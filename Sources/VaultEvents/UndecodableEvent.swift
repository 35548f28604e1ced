/// An event in the log that does not decode: written by a newer build, or a faulty one.
public struct UndecodableEvent: Error, Equatable, Sendable, CustomStringConvertible {
    /// The event's index in the log.
    public var index: UInt64
    /// What is wrong, without any of the event's content.
    public var reason: String

    public init(index: UInt64, reason: String) {
        self.index = index
        self.reason = reason
    }

    public var description: String { "event #\(index) cannot be decoded: \(reason)" }
}
