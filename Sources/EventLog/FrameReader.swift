/// Reads, checks and decrypts single frames of one log file. Knows nothing of commits or tails;
/// `LogScanner` decides what a defect means at a given place.
///
/// Reading a frame has two halves: the header (cheap, sequential: it says where the next frame
/// starts) and the payload (authentication, decryption and hashing: independent per frame, so
/// `FramePipeline` runs it on several cores).
struct FrameReader {
    let file: any StorageFile
    let path: String
    let vaultID: [UInt8]
    let keyring: LogKeyring

    /// What must hold for the next frame: sequence, first event and the chain hash it links to.
    /// A `nil` field is not checked (the head's anchor frame, read out of order).
    struct Expectation {
        var sequence: UInt64?
        var firstEventIndex: UInt64?
        var previousHash: [UInt8]?

        init(after position: LogPosition) {
            sequence = position.sequence + 1
            firstEventIndex = position.eventCount
            previousHash = position.chainHash
        }

        init(sequence: UInt64?, firstEventIndex: UInt64?, previousHash: [UInt8]?) {
            self.sequence = sequence
            self.firstEventIndex = firstEventIndex
            self.previousHash = previousHash
        }

        static let anywhere = Expectation(sequence: nil, firstEventIndex: nil, previousHash: nil)

        /// Whether `frame` sits where this expectation says; the defect otherwise.
        func defect(of frame: LogFrame) -> FrameDefect? {
            if let sequence, frame.sequence != sequence {
                return .sequenceMismatch(expected: sequence, found: frame.sequence)
            }
            if let firstEventIndex, frame.firstEventIndex != firstEventIndex {
                return .eventIndexMismatch(expected: firstEventIndex, found: frame.firstEventIndex)
            }
            if let previousHash, frame.previousHash != previousHash {
                return .chainBroken
            }
            return nil
        }
    }

    /// A header that parsed, belongs to this vault and whose payload lies inside the file.
    struct LocatedHeader {
        var offset: UInt64
        var header: FrameHeader
        var bytes: [UInt8]
        var end: UInt64 { offset + UInt64(LogFormat.frameHeaderSize) + UInt64(header.payloadLength) }
    }

    /// Reads and checks the header at `offset`. The payload length is checked against the
    /// format's cap and the file's end here, before anything is allocated for it.
    func readHeader(at offset: UInt64, fileSize: UInt64) throws -> Result<LocatedHeader, FrameDefect> {
        guard fileSize >= offset, fileSize - offset >= UInt64(LogFormat.frameHeaderSize) else {
            return .failure(.truncatedHeader)
        }
        let bytes = try file.readBytes(at: offset, count: LogFormat.frameHeaderSize)
        switch bytes.withUnsafeBytes({ FrameHeader.decode($0) }) {
        case .failure(let defect):
            return .failure(defect)
        case .success(let header):
            guard header.vaultID == vaultID else { return .failure(.foreignVault) }
            let located = LocatedHeader(offset: offset, header: header, bytes: bytes)
            guard located.end <= fileSize else { return .failure(.truncatedPayload) }
            return .success(located)
        }
    }

    /// Reads, authenticates, hashes and decrypts the payload of a located header.
    /// Safe to call for different frames on different threads.
    func openPayload(_ located: LocatedHeader) throws -> Result<LogFrame, FrameDefect> {
        let header = located.header
        if keyring.erasedKeyIDs.contains(header.keyID) { return try erasedFrame(located) }
        guard let key = keyring.frameKeys[header.keyID] else { return .failure(.unknownKey(header.keyID)) }
        // One buffer per frame: the ciphertext is hashed for the chain, then decrypted in place
        // (libsodium allows the output to be the input) and becomes the plaintext.
        var payload = try file.readBytes(at: located.offset + UInt64(LogFormat.frameHeaderSize), count: Int(header.payloadLength))
        guard payload.count == Int(header.payloadLength) else { return .failure(.truncatedPayload) }
        let plaintextLength = payload.count - LogFormat.tagSize
        let (authentic, hash) = located.bytes.withUnsafeBytes { headerRaw in
            payload.withUnsafeMutableBytes { raw -> (Bool, [UInt8]) in
                let hash = FrameCipher.chainHash(header: headerRaw, ciphertext: UnsafeRawBufferPointer(raw))
                let authenticated = UnsafeRawBufferPointer(rebasing: headerRaw.prefix(LogFormat.frameHeaderAuthenticatedSize))
                let ok = header.nonce.withUnsafeBytes { nonce in
                    FrameCipher.openInPlace(raw, header: authenticated, nonce: nonce, key: key)
                }
                return (ok, hash)
            }
        }
        payload.removeLast(LogFormat.tagSize)
        assert(payload.count == plaintextLength)
        guard authentic else { return .failure(.authenticationFailed) }
        let plaintext: [UInt8]
        if header.isCompressed {
            guard let inflated = FrameCompression.inflate(payload, limit: LogFormat.maxPlaintextLength) else { return .failure(.malformedPayload) }
            plaintext = inflated
        } else {
            plaintext = payload
        }
        guard let ranges = plaintext.withUnsafeBytes({ LogFrame.parseEvents($0, count: Int(header.eventCount)) }) else {
            return .failure(.malformedPayload)
        }
        let position = LogPosition(
            sequence: header.sequence,
            eventCount: header.firstEventIndex + UInt64(header.eventCount),
            offset: located.end,
            chainHash: hash)
        return .success(LogFrame(
            sequence: header.sequence, offset: located.offset, isCommit: header.isCommit,
            firstEventIndex: header.firstEventIndex, position: position, previousHash: header.previousHash,
            keyID: header.keyID, isErased: false, headerEventCount: Int(header.eventCount),
            plaintext: plaintext, eventRanges: ranges))
    }

    /// A frame whose key was destroyed: the ciphertext is hashed for the chain, nothing is opened.
    private func erasedFrame(_ located: LocatedHeader) throws -> Result<LogFrame, FrameDefect> {
        let header = located.header
        let payload = try file.readBytes(at: located.offset + UInt64(LogFormat.frameHeaderSize), count: Int(header.payloadLength))
        guard payload.count == Int(header.payloadLength) else { return .failure(.truncatedPayload) }
        let hash = located.bytes.withUnsafeBytes { headerRaw in
            payload.withUnsafeBytes { FrameCipher.chainHash(header: headerRaw, ciphertext: $0) }
        }
        let position = LogPosition(
            sequence: header.sequence, eventCount: header.firstEventIndex + UInt64(header.eventCount),
            offset: located.end, chainHash: hash)
        return .success(LogFrame(
            sequence: header.sequence, offset: located.offset, isCommit: header.isCommit,
            firstEventIndex: header.firstEventIndex, position: position, previousHash: header.previousHash,
            keyID: header.keyID, isErased: true, headerEventCount: Int(header.eventCount),
            plaintext: [], eventRanges: []))
    }

    /// Reads one frame at `offset` and checks that it sits where `expectation` says.
    func readFrame(at offset: UInt64, fileSize: UInt64, expecting expectation: Expectation) throws -> Result<LogFrame, FrameDefect> {
        switch try readHeader(at: offset, fileSize: fileSize) {
        case .failure(let defect):
            return .failure(defect)
        case .success(let located):
            return try openPayload(located).flatMap { frame in
                expectation.defect(of: frame).map { .failure($0) } ?? .success(frame)
            }
        }
    }

    /// Where an authentic frame of this vault numbered at most `sequence` starts at or after
    /// `offset`, if anywhere: the difference between a torn tail and damage.
    ///
    /// A crash during an append can leave any subset of that batch's pages on disk, so authentic
    /// frames of the unacknowledged batch may follow a hole; those are numbered after the head
    /// record's frame. An authentic frame the head counts as committed can only follow a defect
    /// if committed data was altered or lost. The search starts at `offset` itself: an
    /// acknowledged frame in the wrong place is damage, not a torn write.
    func acknowledgedFrameExists(atOrAfter offset: UInt64, fileSize: UInt64, through sequence: UInt64) throws -> UInt64? {
        let chunkSize = 1 << 20
        var chunkStart = offset
        let magic = LogFormat.frameMagic
        while chunkStart + UInt64(magic.count) <= fileSize {
            let chunk = try file.readBytes(at: chunkStart, count: Swift.min(chunkSize + magic.count - 1, Int(fileSize - chunkStart)))
            var i = 0
            while i + magic.count <= chunk.count && i < chunkSize {
                if chunk[i] == magic[0], chunk[i + 1] == magic[1], chunk[i + 2] == magic[2], chunk[i + 3] == magic[3] {
                    let candidate = chunkStart + UInt64(i)
                    if case .success(let frame) = try readFrame(at: candidate, fileSize: fileSize, expecting: .anywhere),
                       frame.sequence <= sequence {
                        return candidate
                    }
                }
                i += 1
            }
            chunkStart += UInt64(chunkSize)
        }
        return nil
    }
}
