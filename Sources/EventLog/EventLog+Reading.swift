import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// Reading committed frames: readers, the frame index checkpoint, and `verify`.
extension EventLog {
    // MARK: Reading

    /// A reader over committed frames, from the start or from a position this log returned.
    ///
    /// Starting from a position of another log (or of this log before it was replaced) fails on
    /// the first frame with `chainBroken`.
    public func reader(from start: LogPosition? = nil) throws -> LogReader {
        let start = start ?? genesis
        // A position at or past the end must be the end itself; otherwise it belongs to another
        // log or to this one before it was rolled back, and reading would silently yield nothing.
        if start.offset >= committed.offset, start != committed {
            throw EventLogError.damaged(path: directory.log, offset: start.offset, defect: .chainBroken)
        }
        return LogReader(reader: frameReader, from: start, end: committed.offset)
    }

    /// Where a committed frame is and what it holds, from its header alone.
    public struct FrameSummary: Sendable {
        public var offset: UInt64
        public var sequence: UInt64
        public var keyID: UInt32
        public var firstEventIndex: UInt64
        public var eventCount: Int
        /// The chain hash after this frame.
        public var chainHash: [UInt8]
    }

    /// The committed frames' headers up to `end` (the head record's position by default), in
    /// order, each checked for its place (sequence and first event follow on) and the hash chain
    /// checked through `end`: nothing is decrypted, but every byte was hashed, so a header cannot
    /// be changed to hide a frame from a command that reads only some keys' frames. A command that
    /// needs some frames of one key finds them here instead of decrypting the log.
    ///
    /// The headers come from the frame index (`frames.index`), a checkpoint extended by hashing
    /// only the frames committed after it; the whole chain is hashed once, when there is no
    /// usable index, and the index is then saved.
    public func frameSummaries(through end: LogPosition? = nil) throws -> [FrameSummary] {
        let end = end ?? committed
        let index = try indexedFrames()
        guard end.sequence <= committed.sequence, end.sequence >= genesis.sequence else {
            throw EventLogError.damaged(path: directory.log, offset: end.offset, defect: .chainBroken)
        }
        let count = Int(end.sequence - genesis.sequence)
        let frames = Array(index.frames.prefix(count))
        // `end` must be one of this log's positions: the frame it names ends with its chain hash.
        let reachedHash = frames.last?.chainHash ?? genesis.chainHash
        let reachedOffset = count < index.frames.count ? index.frames[count].offset : committed.offset
        guard reachedHash == end.chainHash, reachedOffset == end.offset else {
            throw EventLogError.damaged(path: directory.log, offset: end.offset, defect: .chainBroken)
        }
        return frames
    }

    /// The frame index, extended to `committed`: loaded once (or rebuilt), then kept in memory.
    ///
    /// The index is saved for the next command once the frames added since it was last saved are
    /// 64 or a sixteenth of it: saving it whole after every commit of `serve` (a re-post reads
    /// the frames' headers to find the value it replaces) cost a ten-year log's index per commit,
    /// a fifth of the server's time and growing. A command then scans at most that tail.
    func indexedFrames() throws -> FrameIndex {
        if let frameIndex, frameIndex.position == committed { return frameIndex }
        var index: FrameIndex
        if let frameIndex {
            index = frameIndex
        } else if let loaded = loadFrameIndex() {
            index = loaded
            frameIndexSavedFrames = loaded.frames.count
        } else {
            index = FrameIndex(frames: [], position: genesis)
            frameIndexSavedFrames = 0
        }
        let tail = try scanHeaders(from: index.position, through: committed, checkingChain: true)
        index.frames += tail
        index.position = committed
        frameIndex = index
        if !tail.isEmpty, index.frames.count - frameIndexSavedFrames >= max(64, index.frames.count / 16) || frameIndexSavedFrames == 0 {
            saveFrameIndex(index)
            frameIndexSavedFrames = index.frames.count
        }
        return index
    }

    /// Saves the frame index as far as this process has read the log, when the saved one is
    /// behind it: the next command then scans no frame's header (commands save it themselves once
    /// it is 64 frames, or a sixteenth, ahead).
    public func checkpointFrameIndex() throws {
        let index = try indexedFrames()
        guard index.frames.count != frameIndexSavedFrames else { return }
        saveFrameIndex(index)
        frameIndexSavedFrames = index.frames.count
    }

    /// The saved index when it is this log's: sealed under this vault's key, at a position this
    /// log passes through (the committed position, or one the next frame's header chains from).
    func loadFrameIndex() -> FrameIndex? {
        SealedSnapshot.removeLeftovers(of: directory.frameIndex, fileSystem: fileSystem)
        guard let contents = try? SealedSnapshot.read(from: directory.frameIndex, purpose: FrameIndex.purpose, vaultID: vaultID,
                                                      masterKey: keyring.masterKey, fileSystem: fileSystem, limit: 1 << 28),
              contents.position.sequence <= committed.sequence, contents.position.offset <= committed.offset,
              let index = contents.plaintext.withUnsafeBytes({ FrameIndex(plaintext: $0, position: contents.position, genesis: genesis) })
        else { return nil }
        if index.position == committed { return index }
        guard index.position.sequence < committed.sequence,
              case .success(let next)? = try? frameReader.readHeader(at: index.position.offset, fileSize: committed.offset),
              next.header.sequence == index.position.sequence + 1, next.header.previousHash == index.position.chainHash
        else { return nil }
        return index
    }

    /// Saves the index for the next command; a cache, so a failure only costs that command a rebuild.
    func saveFrameIndex(_ index: FrameIndex) {
        let plaintext = index.plaintext
        try? plaintext.withUnsafeBytes { raw in
            try SealedSnapshot.write(raw, purpose: FrameIndex.purpose, position: index.position, vaultID: vaultID,
                                     masterKey: keyring.masterKey, to: directory.frameIndex, fileSystem: fileSystem)
        }
    }

    /// The committed frames' headers after `start` up to `end`, each checked for its place; with
    /// `checkingChain`, every frame hashed and the chain checked against `end`'s hash.
    func scanHeaders(from start: LogPosition, through end: LogPosition, checkingChain: Bool) throws -> [FrameSummary] {
        let reader = frameReader
        var summaries: [FrameSummary] = []
        var offset = start.offset
        var expected = (sequence: start.sequence + 1, firstEvent: start.eventCount)
        var chainHash = start.chainHash
        while offset < end.offset {
            let located: FrameReader.LocatedHeader
            switch try reader.readHeader(at: offset, fileSize: end.offset) {
            case .success(let header): located = header
            case .failure(let defect): throw EventLogError.damaged(path: directory.log, offset: offset, defect: defect)
            }
            let header = located.header
            guard header.sequence == expected.sequence else {
                throw EventLogError.damaged(path: directory.log, offset: offset, defect: .sequenceMismatch(expected: expected.sequence, found: header.sequence))
            }
            guard header.firstEventIndex == expected.firstEvent else {
                throw EventLogError.damaged(path: directory.log, offset: offset, defect: .eventIndexMismatch(expected: expected.firstEvent, found: header.firstEventIndex))
            }
            if checkingChain {
                guard header.previousHash == chainHash else {
                    throw EventLogError.damaged(path: directory.log, offset: offset, defect: .chainBroken)
                }
                let ciphertext = try file.readBytes(at: offset + UInt64(LogFormat.frameHeaderSize), count: Int(header.payloadLength))
                chainHash = located.bytes.withUnsafeBytes { h in ciphertext.withUnsafeBytes { FrameCipher.chainHash(header: h, ciphertext: $0) } }
            }
            summaries.append(FrameSummary(offset: offset, sequence: header.sequence, keyID: header.keyID,
                                          firstEventIndex: header.firstEventIndex, eventCount: Int(header.eventCount),
                                          chainHash: checkingChain ? chainHash : []))
            expected = (header.sequence + 1, header.firstEventIndex + UInt64(header.eventCount))
            offset = located.end
        }
        guard !checkingChain || chainHash == end.chainHash else {
            throw EventLogError.damaged(path: directory.log, offset: end.offset, defect: .chainBroken)
        }
        return summaries
    }

    /// Reads the audit key's committed frames, and only those, and hands them to `body` in order,
    /// once all of them are known to be there: their chain hashes, folded in order, must give the
    /// digest the head record holds, so a frame hidden by a changed key id (or a data frame
    /// passed off as an audit one, which fails authentication) is damage. The audit trail costs
    /// its own frames and the log's headers. A version-1 log (no digest) checks the whole chain.
    public func readAuditFrames(_ body: (LogFrame) throws -> Void) throws {
        let audit: [FrameSummary]
        var frames: [LogFrame] = []
        if auditChain.isEmpty {
            audit = try frameSummaries().filter { $0.keyID == LogFormat.auditKeyID }
            try readFrames(audit) { frames.append($0) }
        } else {
            audit = try indexedFrames().frames.filter { $0.keyID == LogFormat.auditKeyID }
            var digest = LogFormat.auditGenesis(vaultID: vaultID)
            try readFrames(audit) { frame in
                digest = LogFormat.foldAudit(digest, frame.position.chainHash)
                frames.append(frame)
            }
            guard digest == auditChain else {
                throw EventLogError.damaged(path: directory.log, offset: committed.offset, defect: .chainBroken)
            }
        }
        for frame in frames { try body(frame) }
    }

    /// Reads, authenticates and decrypts the committed frames `frames` (from `frameSummaries`),
    /// in order, and hands each to `body`. Each frame is checked where it stands (its sequence
    /// and first event); the chain across frames not read is `verify`'s to check.
    public func readFrames(_ frames: [FrameSummary], _ body: (LogFrame) throws -> Void) throws {
        let reader = frameReader
        for summary in frames {
            let expectation = FrameReader.Expectation(sequence: summary.sequence, firstEventIndex: summary.firstEventIndex, previousHash: nil)
            switch try reader.readFrame(at: summary.offset, fileSize: committed.offset, expecting: expectation) {
            case .success(let frame): try body(frame)
            case .failure(let defect): throw EventLogError.damaged(path: directory.log, offset: summary.offset, defect: defect)
            }
        }
    }

    var frameReader: FrameReader {
        FrameReader(file: file, path: directory.log, vaultID: vaultID, keyring: keyring)
    }

    /// Checks every frame of the log in `directory`: structure, authentication, sequence, chain,
    /// and agreement with the head record. Never modifies anything; damage becomes `problems`.
    public static func verify(
        in directory: String, masterKey: SecretKey, fileSystem: any FileSystem = POSIXFileSystem(),
        unheadedCommit: UnheadedCommitCheck? = nil
    ) throws -> VerificationReport {
        let names = LogDirectory(directory)
        guard fileSystem.exists(names.log) else { throw EventLogError.notFound(path: names.log) }
        let file = try fileSystem.open(names.log, mode: .readOnly)
        var report = VerificationReport(frames: 0, events: 0, problems: [])
        do {
            let state = try inspect(file: file, names: names, masterKey: masterKey, fileSystem: fileSystem, verifyAll: true,
                                    unheadedCommit: unheadedCommit)
            report.frames = state.scan.committedFrames
            report.erasedFrames = state.scan.erasedFrames
            report.erasedEvents = state.scan.erasedEvents
            report.events = state.scan.lastCommit.eventCount
            report.tornTail = state.scan.tornTail
            report.committed = state.scan.lastCommit
        } catch let error as EventLogError {
            if case .io = error { throw error }
            report.problems.append(error.description)
        }
        return report
    }
}
