/// Iterates over the committed frames of a log, checking the chain as it goes.
///
/// Reading stops at the committed end known when the reader was made; frames appended later
/// are seen by a new reader. Any defect before that end is damage and throws with its offset.
public struct LogReader {
    private var pipeline: FramePipeline
    private let path: String
    /// The position after the last frame returned.
    public private(set) var position: LogPosition

    init(reader: FrameReader, from start: LogPosition, end: UInt64) {
        self.pipeline = FramePipeline(reader: reader, from: start.offset, end: end)
        self.path = reader.path
        self.position = start
    }

    /// The next committed frame, or `nil` at the committed end.
    public mutating func next() throws -> LogFrame? {
        guard let (offset, read) = try pipeline.next() else { return nil }
        let frame: LogFrame
        switch read {
        case .success(let opened): frame = opened
        case .failure(let defect): throw EventLogError.damaged(path: path, offset: offset, defect: defect)
        }
        if let defect = FrameReader.Expectation(after: position).defect(of: frame) {
            throw EventLogError.damaged(path: path, offset: offset, defect: defect)
        }
        position = frame.position
        return frame
    }
}
