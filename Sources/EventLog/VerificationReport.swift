/// The result of checking a whole log: every frame read, authenticated and chained.
public struct VerificationReport: Equatable, Sendable {
    /// Committed frames that verified.
    public var frames: Int
    /// Events in those frames.
    public var events: UInt64
    /// Committed frames whose key was destroyed (erased, not damaged): chained, never readable.
    public var erasedFrames = 0
    /// Events those frames held.
    public var erasedEvents: UInt64 = 0
    /// Damage found, each naming the file and byte offset. Empty when the log is sound.
    public var problems: [String]
    /// What is not damage but not as it should stay (an erase a crash cut short), each a sentence.
    public var warnings: [String] = []
    /// An uncommitted tail, which is not damage: the next writer cuts it away.
    public var tornTail: TornTail?
    /// The last committed position that verified.
    public var committed: LogPosition?

    public init(frames: Int, events: UInt64, problems: [String]) {
        self.frames = frames
        self.events = events
        self.problems = problems
    }

    /// Whether the log is free of damage.
    public var isOK: Bool { problems.isEmpty }
}
