/// Walks frames from a known position to the end of the file and decides what the end means:
/// a clean end, a torn tail (a crash mid-append: nothing authentic follows the last commit), or
/// damage (an authentic frame follows a defect, so committed data was lost or altered).
struct LogScanner {
    let reader: FrameReader

    struct Result {
        var lastCommit: LogPosition
        var lastCommitFrameOffset: UInt64
        var committedFrames: Int
        /// Committed frames whose key was destroyed, and the events they held.
        var erasedFrames = 0
        var erasedEvents: UInt64 = 0
        var tornTail: TornTail?
        /// The defect that ended the scan early, when it ended at a defect rather than at end of file.
        var tailDefect: (offset: UInt64, defect: FrameDefect)?
    }

    /// Scans from `start` (a committed position, whose frame begins at `startFrameOffset`).
    /// `acknowledged` is the last frame the head record counts as committed: a defect followed by
    /// an authentic frame up to it is damage; one followed only by later frames is a torn tail.
    /// `onFrame` sees every authentic frame in order, committed or not.
    func scan(
        from start: LogPosition, startFrameOffset: UInt64, fileSize: UInt64, acknowledged: UInt64,
        onFrame: (LogFrame) throws -> Void = { _ in }
    ) throws -> Result {
        var position = start
        var result = Result(lastCommit: start, lastCommitFrameOffset: startFrameOffset, committedFrames: 0)
        var pendingFrames = 0
        var pendingErased = (frames: 0, events: UInt64(0))
        var pipeline = FramePipeline(reader: reader, from: start.offset, end: fileSize)
        while let (offset, read) = try pipeline.next() {
            let placed = read.flatMap { frame in
                FrameReader.Expectation(after: position).defect(of: frame).map { .failure($0) } ?? .success(frame)
            }.flatMap { frame -> Swift.Result<LogFrame, FrameDefect> in
                // A destroyed key seals nothing new: such a frame past the acknowledged commit
                // cannot be authenticated, so it counts as a torn write, never as a commit.
                frame.isErased && frame.sequence > acknowledged ? .failure(FrameDefect.unknownKey(frame.keyID)) : .success(frame)
            }
            switch placed {
            case .success(let frame):
                try onFrame(frame)
                position = frame.position
                pendingFrames += 1
                if frame.isErased {
                    pendingErased.frames += 1
                    pendingErased.events += UInt64(frame.headerEventCount)
                }
                if frame.isCommit {
                    result.lastCommit = position
                    result.lastCommitFrameOffset = frame.offset
                    result.committedFrames += pendingFrames
                    result.erasedFrames += pendingErased.frames
                    result.erasedEvents += pendingErased.events
                    pendingFrames = 0
                    pendingErased = (0, 0)
                }
            case .failure(let defect):
                // A crash never leaves an acknowledged frame after a torn write; tampering and lost
                // sectors in the middle do.
                if try reader.acknowledgedFrameExists(atOrAfter: offset, fileSize: fileSize, through: acknowledged) != nil {
                    throw EventLogError.damaged(path: reader.path, offset: offset, defect: defect)
                }
                result.tailDefect = (offset, defect)
            }
            if result.tailDefect != nil { break }
        }
        if result.lastCommit.offset < fileSize {
            result.tornTail = TornTail(
                offset: result.lastCommit.offset,
                length: fileSize - result.lastCommit.offset,
                uncommittedFrames: pendingFrames)
        }
        return result
    }
}
