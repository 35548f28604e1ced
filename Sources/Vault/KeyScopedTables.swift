import EventLog
import VaultEvents

/// The interned strings and sources, one table per data key. The definitions an event needs go
/// under the event's own key, so destroying a key destroys the names its data brought in (types,
/// sources, devices, short values) with the data; an event of another key never refers to them.
/// A key's tables are read from that key's frames, the first time a command needs them.
///
/// Version-1 logs kept one table under the audit key; they are read with it and re-encoded when
/// upgraded.
final class KeyScopedTables {
    let log: EventLog
    private var encoders: [UInt32: EventEncoder] = [:]
    private var summaries: (frames: [EventLog.FrameSummary], at: LogPosition)?
    /// The events of the frame `event(keyID:index:)` read last, by their index: a re-post
    /// replaces many values of one earlier commit, each read back from the same frame.
    private var lastFrame: (keyID: UInt32, firstIndex: UInt64, events: [[UInt8]])?

    init(log: EventLog) {
        self.log = log
    }

    /// The committed frames' headers, read again only when the log has moved on.
    func frames() throws -> [EventLog.FrameSummary] {
        if let summaries, summaries.at == log.committed { return summaries.frames }
        let all = try log.frameSummaries()
        summaries = (all, log.committed)
        return all
    }

    /// Shows an event's bytes with a lookup of the strings its ids name (its key's table as far
    /// as the log has defined it: definitions come before the events that use them).
    typealias EventVisitor = (_ index: UInt64, _ bytes: UnsafeRawBufferPointer, _ string: (UInt64) -> String?) throws -> Void

    /// The encoder continuing `keyID`'s tables. `visit` sees the bytes of every event already
    /// sealed with the key (the import session takes their identities on the way).
    func encoder(for keyID: UInt32, visiting visit: EventVisitor? = nil) throws -> EventEncoder {
        if let encoder = encoders[keyID] {
            if let visit { try forEachEvent(of: keyID) { index, bytes in try visit(index, bytes) { encoder.string(id: $0) } } }
            return encoder
        }
        let visit = visit ?? { _, _, _ in }
        let decoder = EventDecoder()
        let lookup: (UInt64) -> String? = { decoder.string(id: $0) }
        try readFrames(of: keyID) { frame in
            try frame.forEachEvent { index, bytes in
                if EncodedEvent(bytes).isDefinition {
                    _ = try decoder.decode(bytes, index: index)
                } else {
                    // An unknown version or kind may be a newer build's definition: continuing the
                    // tables past it could assign ids twice, so it is refused as a full decode would.
                    guard EncodedEvent(bytes).knownKind != nil else {
                        throw UndecodableEvent(index: index, reason: "unknown encoding version or event kind (written by a newer build?)")
                    }
                    try visit(index, bytes, lookup)
                }
            }
        }
        let encoder = EventEncoder(continuing: decoder)
        encoders[keyID] = encoder
        return encoder
    }

    /// Shows every committed event sealed with `keyID` (definitions aside) to `visit`, with its
    /// log-wide index.
    func forEachEvent(of keyID: UInt32, _ visit: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
        try readFrames(of: keyID) { frame in
            try frame.forEachEvent { index, bytes in
                if !EncodedEvent(bytes).isDefinition { try visit(index, bytes) }
            }
        }
    }

    /// The bytes of committed event `index`, which `keyID` sealed; nil when no frame of the key holds it.
    ///
    /// The frame is found by its first event's index (frames follow one another in the log, so
    /// their indices rise: a binary search, where a scan over a ten-year log's frames for each of
    /// a re-post's 24 values took most of the server's time), and its events are kept until
    /// another frame is read.
    func event(keyID: UInt32, index: UInt64) throws -> [UInt8]? {
        if let cached = lastFrame, cached.keyID == keyID, index >= cached.firstIndex, index - cached.firstIndex < UInt64(cached.events.count) {
            return cached.events[Int(index - cached.firstIndex)]
        }
        let all = try frames()
        var low = 0, high = all.count
        while low < high {
            let middle = (low + high) / 2
            if all[middle].firstEventIndex + UInt64(all[middle].eventCount) <= index { low = middle + 1 } else { high = middle }
        }
        guard low < all.count, all[low].keyID == keyID, all[low].firstEventIndex <= index else { return nil }
        var events: [[UInt8]] = []
        events.reserveCapacity(all[low].eventCount)
        try log.readFrames([all[low]]) { frame in
            frame.forEachEvent { _, bytes in events.append(Array(bytes)) }
        }
        guard index - all[low].firstEventIndex < UInt64(events.count) else { return nil }
        lastFrame = (keyID, all[low].firstEventIndex, events)
        return events[Int(index - all[low].firstEventIndex)]
    }

    /// The committed frames of `keyID`: the audit key's through its own digest, a data key's
    /// through the whole chain's check.
    private func readFrames(of keyID: UInt32, _ body: (LogFrame) throws -> Void) throws {
        if keyID == EventLog.auditKeyID {
            try log.readAuditFrames(body)
        } else {
            try log.readFrames(try frames().filter { $0.keyID == keyID }, body)
        }
    }

    /// Forgets what this process holds of keys an erasure destroyed: their tables and, if it is
    /// theirs, the frame kept for replaced values (its plaintext must not outlive the key).
    func forget(keyIDs: Set<UInt32>) {
        for id in keyIDs { encoders[id] = nil }
        if let cached = lastFrame, keyIDs.contains(cached.keyID) { lastFrame = nil }
    }

    /// Forgets every table: ids were assigned that never reached the log (a rolled-back commit),
    /// or the log moved on under another handle.
    func reset() {
        encoders = [:]
        summaries = nil
        lastFrame = nil
    }

    /// Decoders for a pass over frames in log order, one per key, each learning its key's
    /// definitions as the pass meets them.
    struct Decoders {
        private var byKey: [UInt32: EventDecoder] = [:]

        /// The decoder of `frame`'s key.
        mutating func decoder(for frame: LogFrame) -> EventDecoder {
            if let decoder = byKey[frame.keyID] { return decoder }
            let decoder = EventDecoder()
            byKey[frame.keyID] = decoder
            return decoder
        }

        /// Puts in a decoder that already learned its key's definitions.
        mutating func set(_ decoder: EventDecoder, for keyID: UInt32) { byKey[keyID] = decoder }

        func has(_ keyID: UInt32) -> Bool { byKey[keyID] != nil }
    }

    /// A decoder that learned `keyID`'s definitions in the frames up to `end`.
    func decoder(for keyID: UInt32, through end: LogPosition) throws -> EventDecoder {
        let decoder = EventDecoder()
        try log.readFrames(try frames().filter { $0.keyID == keyID && $0.sequence <= end.sequence }) { frame in
            try frame.forEachEvent { index, bytes in
                if EncodedEvent(bytes).isDefinition { _ = try decoder.decode(bytes, index: index) }
            }
        }
        return decoder
    }
}
