import BinaryCoding
import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// Appending: transactions of events per data key, sealed into frames in the background, and the
/// commit that makes them durable before the head record names them.
extension EventLog {
    // MARK: Writing

    /// Appends `batch` as one durable commit and returns the new committed position.
    ///
    /// The events are sealed into as few frames as `targetFrameSize` allows, written with one
    /// call and made durable with `fdatasync` before the head record is replaced; when this
    /// returns, the batch survives a crash. A batch of several frames commits with its last frame.
    /// If it throws, the batch may or may not be in the log, and this handle refuses further
    /// writes: reopen to recover.
    @discardableResult
    public func append(_ batch: EventBatch) throws -> LogPosition {
        var transaction = try beginTransaction()
        transaction.set(batch, for: LogFormat.auditKeyID)
        return try commit(&transaction)
    }

    /// Starts a commit that may be larger than memory: events added to it are sealed into frames
    /// and written (without the commit flag, unsynced) whenever a frame's worth has gathered;
    /// `commit` writes the rest with the commit flag and makes it all durable. Until then readers
    /// ignore the frames, and a crash leaves them as a torn tail that the next writer cuts.
    public func beginTransaction() throws -> LogTransaction {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        guard !lockReleased else { throw EventLogError.writerFailed }
        guard !failed else { throw EventLogError.writerFailed }
        guard written == committed else { throw EventLogError.writerFailed }
        return LogTransaction(log: ObjectIdentifier(self))
    }

    /// The id of the key that seals events of `label` (for the vault, a category and a month):
    /// its live key, or a new random one, which `commit` writes to the key table before the
    /// frames that use it count as committed.
    public func keyID(forLabel label: [UInt8]) throws -> UInt32 {
        guard mode == .readWrite else { throw EventLogError.readOnly }
        guard formatVersion >= 2 else { return LogFormat.auditKeyID }
        if let entry = keyTable.liveEntry(for: label) { return entry.id }
        let id = keyTable.addKey(for: label)
        keyring.use(keyTable)
        return id
    }

    /// Adds one event to a transaction, sealed with key `keyID` (the audit key by default),
    /// writing full frames as they fill. Events of one key stay in order (so a key's definitions
    /// precede the events that use them); the audit key's frames go out before the data frames
    /// written with them.
    public func append(_ event: UnsafeRawBufferPointer, keyID: UInt32 = EventLog.auditKeyID, to transaction: inout LogTransaction) throws {
        precondition(transaction.log == ObjectIdentifier(self), "a transaction belongs to the log that began it")
        // A key is checked when a run of its events starts in the transaction (keys are not
        // taken away while one is open), not for every event.
        if !transaction.isRecent(keyID) {
            guard keyring.frameKeys[keyID] != nil else { throw EventLogError.damaged(path: directory.keys, offset: 0, defect: .unknownKey(keyID)) }
        }
        let size = try transaction.append(event, key: keyID)
        if size >= frameSize {
            try flush(keyID == LogFormat.auditKeyID ? [keyID] : [LogFormat.auditKeyID, keyID], of: &transaction)
        }
        if transaction.pendingBytes > pendingLimit {
            try flush([LogFormat.auditKeyID] + transaction.pendingKeys.filter { $0 != LogFormat.auditKeyID }, of: &transaction)
        }
    }

    /// Makes a transaction durable: the new keys go to the key table, the remaining events (audit
    /// key first, or an empty commit-marker frame) go out with the last frame carrying the commit
    /// flag, then `fdatasync`, then the head record.
    @discardableResult
    public func commit(_ transaction: inout LogTransaction) throws -> LogPosition {
        precondition(transaction.log == ObjectIdentifier(self), "a transaction belongs to the log that began it")
        try writeInFlight()
        let keys = transaction.pendingKeys
        guard written != committed || !keys.isEmpty else { return committed }
        try saveKeyTableIfChanged()
        let order = keys.contains(LogFormat.auditKeyID) ? [LogFormat.auditKeyID] + keys.filter { $0 != LogFormat.auditKeyID } : keys
        // With nothing pending, an empty frame of the audit key carries the commit flag.
        let parts = (order.isEmpty ? [LogFormat.auditKeyID] : order).map { part(of: $0, in: transaction) }
        let job = CompressionJob(parts: parts)
        if formatVersion >= LogFormat.firstCompressedVersion {
            // The commit waits for these frames: every core compresses them.
            job.run(workers: Self.commitCompressionWorkers)
        }
        try write(job, commit: true)
        for part in parts { transaction.clear(part.keyID) }
        do {
            try file.sync()
        } catch {
            abandonWrites()
            throw error
        }
        committed = written
        lastFrameOffset = writtenLastFrameOffset
        auditChain = writtenAuditChain
        do {
            try writeHead()
        } catch {
            failed = true
            throw error
        }
        return committed
    }

    /// Drops a transaction's frames from the file, and the keys it made; the log is as it was
    /// before it began.
    public func rollback(_ transaction: inout LogTransaction) throws {
        discardInFlight()
        transaction.clearAll()
        keyTable = savedKeyTable
        keyring.reset(to: keyTable)
        guard written != committed else { return }
        do {
            try file.truncate(to: committed.offset)
            written = committed
            writtenLastFrameOffset = lastFrameOffset
            writtenAuditChain = auditChain
        } catch {
            failed = true
            throw error
        }
    }

    /// Writes the key table when a transaction added keys: atomically, and durably before the
    /// commit that needs them.
    func saveKeyTableIfChanged() throws {
        guard keyTable.nextID != savedKeyTable.nextID else { return }
        do {
            try replaceKeyTable(keyTable.sealed(vaultID: vaultID, tableKey: keyring.tableKey))
        } catch {
            abandonWrites()
            throw error
        }
        savedKeyTable = keyTable
    }

    /// Hands the events gathered in `transaction` under `keyIDs` (in that order; keys with none
    /// are passed over) to the compression queue as one job, while the caller goes on; they are
    /// sealed and written, in order, when the next job is handed over, or at the commit. A log
    /// that does not compress seals and writes them now.
    func flush(_ keyIDs: [UInt32], of transaction: inout LogTransaction) throws {
        let parts = keyIDs.map { part(of: $0, in: transaction) }.filter { !$0.batch.isEmpty }
        guard !parts.isEmpty else { return }
        for part in parts { transaction.clear(part.keyID) }
        let job = CompressionJob(parts: parts)
        guard formatVersion >= LogFormat.firstCompressedVersion else {
            try writeInFlight()
            try write(job, commit: false)
            return
        }
        compressionQueue.async { job.run() }
        inFlight.append(job)
        while inFlight.count > 1 { try writeOldestInFlight() }
    }

    /// `keyID`'s events gathered in `transaction`, cut into frames.
    func part(of keyID: UInt32, in transaction: LogTransaction) -> CompressionJob.Part {
        transaction.withBatch(of: keyID) { batch in
            CompressionJob.Part(keyID: keyID, batch: batch, slices: batch.frameSlices(targetSize: frameSize))
        }
    }

    /// Threads compressing the frames a commit writes.
    static let commitCompressionWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Seals and writes every batch being compressed, in order.
    func writeInFlight() throws {
        while !inFlight.isEmpty { try writeOldestInFlight() }
    }

    func writeOldestInFlight() throws {
        let job = inFlight.removeFirst()
        job.wait()
        try write(job, commit: false)
    }

    /// Seals a job's parts after what was written so far (with its compressed frames, once it
    /// has run; a log that does not compress never runs it) and writes them; with `commit`, the
    /// last frame carries the commit flag.
    func write(_ job: CompressionJob, commit: Bool) throws {
        for (index, part) in job.parts.enumerated() {
            let sealed = seal(part.batch, keyID: part.keyID, after: written, lastFrameOffset: writtenLastFrameOffset,
                              commit: commit && index == job.parts.count - 1,
                              slices: part.slices, compressed: job.compressed.isEmpty ? [] : job.compressed[index])
            try write(sealed, keyID: part.keyID)
        }
    }

    /// Waits for the batches being compressed and forgets them (a rollback or a failed write).
    func discardInFlight() {
        for job in inFlight { job.wait() }
        inFlight = []
    }

    func write(_ sealed: (bytes: [UInt8], position: LogPosition, lastFrameOffset: UInt64, hashes: [[UInt8]]), keyID: UInt32) throws {
        let (bytes, position, frameOffset, frameHashes) = sealed
        do {
            try bytes.withUnsafeBytes { try file.write(at: written.offset, $0) }
        } catch {
            abandonWrites()
            throw error
        }
        written = position
        writtenLastFrameOffset = frameOffset
        if keyID == LogFormat.auditKeyID, !writtenAuditChain.isEmpty {
            for hash in frameHashes { writtenAuditChain = LogFormat.foldAudit(writtenAuditChain, hash) }
        }
    }

    /// After a failed write or sync nothing about the tail can be trusted: cut back to the last
    /// commit if possible, and refuse further writes either way (recovery cuts on reopen).
    func abandonWrites() {
        discardInFlight()
        failed = true
        try? file.truncate(to: committed.offset)
        written = committed
        writtenLastFrameOffset = lastFrameOffset
        writtenAuditChain = auditChain
    }

    /// Seals a batch, cut into `slices`, into consecutive frames following `start`, each frame
    /// with its bytes in `compressed` where it has some (nil, or none given: stored as it is).
    /// With `commit`, the last frame carries the commit flag; no slices then become one empty
    /// commit-marker frame.
    func seal(_ batch: EventBatch, keyID: UInt32, after start: LogPosition, lastFrameOffset: UInt64, commit: Bool,
                      slices: [(range: Range<Int>, events: Int)], compressed: [[UInt8]?])
        -> (bytes: [UInt8], position: LogPosition, lastFrameOffset: UInt64, hashes: [[UInt8]]) {
        var slices = slices
        if slices.isEmpty && commit { slices = [(0..<0, 0)] }
        func compressedFrame(_ index: Int) -> [UInt8]? { index < compressed.count ? compressed[index] : nil }
        let overhead = LogFormat.frameHeaderSize + LogFormat.tagSize
        var output = [UInt8]()
        let sealedBytes = slices.indices.reduce(0) { $0 + (compressedFrame($1)?.count ?? slices[$1].range.count) }
        output.reserveCapacity(sealedBytes + slices.count * overhead)
        var position = start
        var frameOffset = lastFrameOffset
        var hashes: [[UInt8]] = []
        let key = keyring.frameKeys[keyID]!
        batch.payload.withUnsafeBytes { payload in
            for (index, slice) in slices.enumerated() {
                let raw = slice.range.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: payload[slice.range])
                let compressed = compressedFrame(index)
                let flags = (commit && index == slices.count - 1 ? LogFormat.commitFlag : 0) | (compressed != nil ? LogFormat.deflateFlag : 0)
                let sealedLength = compressed?.count ?? slice.range.count
                let header = FrameHeader(
                    version: formatVersion,
                    flags: flags,
                    keyID: keyID,
                    payloadLength: UInt32(sealedLength + LogFormat.tagSize),
                    sequence: position.sequence + 1,
                    firstEventIndex: position.eventCount,
                    eventCount: UInt32(slice.events),
                    vaultID: vaultID,
                    previousHash: position.chainHash,
                    nonce: Sodium.randomBytes(LogFormat.nonceSize))
                let headerBytes = header.encoded()
                let frameStart = output.count
                output.append(contentsOf: headerBytes)
                output.appendZeros(sealedLength + LogFormat.tagSize)
                let hash = output.withUnsafeMutableBytes { out -> [UInt8] in
                    let headerRegion = UnsafeRawBufferPointer(rebasing: out[frameStart..<frameStart + LogFormat.frameHeaderSize])
                    let cipherRegion = UnsafeMutableRawBufferPointer(rebasing: out[(frameStart + LogFormat.frameHeaderSize)...])
                    func sealInto(_ plaintext: UnsafeRawBufferPointer) {
                        header.nonce.withUnsafeBytes { nonce in
                            FrameCipher.seal(
                                plaintext,
                                header: UnsafeRawBufferPointer(rebasing: headerRegion.prefix(LogFormat.frameHeaderAuthenticatedSize)),
                                nonce: nonce, key: key, into: cipherRegion)
                        }
                    }
                    if let compressed { compressed.withUnsafeBytes { sealInto($0) } } else { sealInto(raw) }
                    return FrameCipher.chainHash(header: headerRegion, ciphertext: UnsafeRawBufferPointer(cipherRegion))
                }
                frameOffset = start.offset + UInt64(frameStart)
                hashes.append(hash)
                position = LogPosition(
                    sequence: header.sequence,
                    eventCount: position.eventCount + UInt64(slice.events),
                    offset: start.offset + UInt64(output.count),
                    chainHash: hash)
            }
        }
        return (output, position, frameOffset, hashes)
    }
}
