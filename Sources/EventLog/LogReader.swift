/// Iterates over the committed frames of a log, checking the chain as it goes.
///
/// Reading stops at the committed end known when the reader was made; frames appended later
/// are seen by a new reader. Any defect before that end is damage and throws with its offset.
public struct LogReader {
    let reader: FrameReader
    let end: UInt64
    /// The position after the last frame returned.
    public private(set) var position: LogPosition

    init(reader: FrameReader, from start: LogPosition, end: UInt64) {
        self.reader = reader
        self.position = start
        self.end = end
    }

    /// The next committed frame, or `nil` at the committed end.
    public mutating func next() throws -> LogFrame? {
        guard position.offset < end else { return nil }
        switch try reader.readFrame(at: position.offset, fileSize: end, expecting: .init(after: position)) {
        case .success(let frame):
            position = frame.position
            return frame
        case .failure(let defect):
            throw EventLogError.damaged(path: reader.path, offset: position.offset, defect: defect)
        }
    }
}
