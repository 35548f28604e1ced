import BinaryCoding

/// The checkpoint of the committed frames' headers (`frames.index`): where each frame is, its key,
/// its events and its chain hash, up to a log position. Built once by hashing the whole chain,
/// then extended by the frames after its position only, so that a command reading some keys'
/// frames costs those frames and the tail, not the log's size (docs/log-format.md, "Frame index").
///
/// It is a snapshot (`SealedSnapshot`, purpose 3): sealed under a key derived from the master
/// key, so what it says was written by a holder of the key; a missing, damaged, foreign or stale
/// one (a position this log does not pass through) is rebuilt from the log, never trusted blindly.
extension EventLog {
    /// The snapshot purpose of the frame index (`frames.index`), for tools that read or write one.
    public static let frameIndexPurpose = FrameIndex.purpose
}

struct FrameIndex {
    static let purpose: UInt16 = 3
    static let version: UInt8 = 1
    /// Bytes per frame: offset u64, key id u32, event count u32, chain hash (32).
    static let entrySize = 8 + 4 + 4 + 32

    var frames: [EventLog.FrameSummary]
    var position: LogPosition

    /// Version byte, frame count (u32 LE), then one entry per frame.
    var plaintext: [UInt8] {
        var writer = ByteWriter()
        writer.write(Self.version)
        writer.write(UInt32(frames.count))
        for frame in frames {
            writer.write(frame.offset)
            writer.write(frame.keyID)
            writer.write(UInt32(frame.eventCount))
            writer.write(frame.chainHash)
        }
        return writer.bytes
    }

    /// Reads `plaintext` as the index at `position`; nil unless every frame follows on from the
    /// one before (offsets rising, sequences and first events counted from genesis) and the last
    /// ends exactly at `position` (its sequence, events and chain hash).
    init?(plaintext: UnsafeRawBufferPointer, position: LogPosition, genesis: LogPosition) {
        var reader = ByteReader(plaintext)
        guard reader.read(UInt8.self) == Self.version, let count: UInt32 = reader.read(),
              reader.remaining == Int(count) * Self.entrySize, UInt64(count) == position.sequence - genesis.sequence else { return nil }
        var frames: [EventLog.FrameSummary] = []
        frames.reserveCapacity(Int(count))
        var offset = genesis.offset, firstEvent = genesis.eventCount, chainHash = genesis.chainHash
        for i in 0..<Int(count) {
            guard let at: UInt64 = reader.read(), let keyID: UInt32 = reader.read(), let events: UInt32 = reader.read(),
                  let hash = reader.readBytes(32), at >= offset, at < position.offset else { return nil }
            frames.append(EventLog.FrameSummary(offset: at, sequence: genesis.sequence + UInt64(i) + 1, keyID: keyID,
                                                firstEventIndex: firstEvent, eventCount: Int(events), chainHash: hash))
            offset = at + 1
            firstEvent += UInt64(events)
            chainHash = hash
        }
        guard firstEvent == position.eventCount, chainHash == position.chainHash else { return nil }
        self.frames = frames
        self.position = position
    }

    init(frames: [EventLog.FrameSummary], position: LogPosition) {
        self.frames = frames
        self.position = position
    }
}
