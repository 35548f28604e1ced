/// Reads, checks and decrypts single frames of one log file. Knows nothing of commits or tails;
/// `LogScanner` decides what a defect means at a given place.
struct FrameReader {
    let file: any StorageFile
    let path: String
    let vaultID: [UInt8]
    let keyring: LogKeyring

    /// What must hold for the next frame: sequence, first event and the chain hash it links to.
    /// `previousHash == nil` skips the chain check (the head's anchor frame, read out of order).
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
    }

    /// Reads the frame at `offset`, checking structure, place in the chain and authenticity.
    func readFrame(at offset: UInt64, fileSize: UInt64, expecting expectation: Expectation) throws -> Result<LogFrame, FrameDefect> {
        guard fileSize >= offset, fileSize - offset >= UInt64(LogFormat.frameHeaderSize) else {
            return .failure(.truncatedHeader)
        }
        let headerBytes = try file.readBytes(at: offset, count: LogFormat.frameHeaderSize)
        let header: FrameHeader
        switch headerBytes.withUnsafeBytes({ FrameHeader.decode($0) }) {
        case .failure(let defect): return .failure(defect)
        case .success(let decoded): header = decoded
        }
        guard header.vaultID == vaultID else { return .failure(.foreignVault) }
        let end = offset + UInt64(LogFormat.frameHeaderSize) + UInt64(header.payloadLength)
        guard end <= fileSize else { return .failure(.truncatedPayload) }
        if let sequence = expectation.sequence, header.sequence != sequence {
            return .failure(.sequenceMismatch(expected: sequence, found: header.sequence))
        }
        if let first = expectation.firstEventIndex, header.firstEventIndex != first {
            return .failure(.eventIndexMismatch(expected: first, found: header.firstEventIndex))
        }
        if let previous = expectation.previousHash, header.previousHash != previous {
            return .failure(.chainBroken)
        }
        guard let key = keyring.frameKeys[header.keyID] else { return .failure(.unknownKey(header.keyID)) }

        let ciphertext = try file.readBytes(at: offset + UInt64(LogFormat.frameHeaderSize), count: Int(header.payloadLength))
        guard ciphertext.count == Int(header.payloadLength) else { return .failure(.truncatedPayload) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count - LogFormat.tagSize)
        let (authentic, hash) = headerBytes.withUnsafeBytes { headerRaw in
            ciphertext.withUnsafeBytes { cipherRaw in
                plaintext.withUnsafeMutableBytes { plainRaw in
                    let authenticated = UnsafeRawBufferPointer(rebasing: headerRaw.prefix(LogFormat.frameHeaderAuthenticatedSize))
                    let ok = header.nonce.withUnsafeBytes { nonce in
                        FrameCipher.open(cipherRaw, header: authenticated, nonce: nonce, key: key, into: plainRaw)
                    }
                    return (ok, ok ? FrameCipher.chainHash(header: headerRaw, ciphertext: cipherRaw) : [])
                }
            }
        }
        guard authentic else { return .failure(.authenticationFailed) }
        guard let ranges = plaintext.withUnsafeBytes({ LogFrame.parseEvents($0, count: Int(header.eventCount)) }) else {
            return .failure(.malformedPayload)
        }
        let position = LogPosition(
            sequence: header.sequence,
            eventCount: header.firstEventIndex + UInt64(header.eventCount),
            offset: end,
            chainHash: hash)
        return .success(LogFrame(
            sequence: header.sequence, offset: offset, isCommit: header.isCommit,
            firstEventIndex: header.firstEventIndex, position: position,
            plaintext: plaintext, eventRanges: ranges))
    }

    /// Where an authentic frame of this vault starts at or after `offset`, if anywhere: the difference
    /// between a torn tail (nothing valid follows) and damage in the middle of the log.
    /// Starts at `offset` itself: an authentic frame in the wrong place is damage, not a torn write.
    func authenticFrameExists(atOrAfter offset: UInt64, fileSize: UInt64) throws -> UInt64? {
        let chunkSize = 1 << 20
        var chunkStart = offset
        let magic = LogFormat.frameMagic
        while chunkStart + UInt64(magic.count) <= fileSize {
            let chunk = try file.readBytes(at: chunkStart, count: Swift.min(chunkSize + magic.count - 1, Int(fileSize - chunkStart)))
            var i = 0
            while i + magic.count <= chunk.count {
                if chunk[i] == magic[0], chunk[i + 1] == magic[1], chunk[i + 2] == magic[2], chunk[i + 3] == magic[3] {
                    let candidate = chunkStart + UInt64(i)
                    let any = Expectation(sequence: nil, firstEventIndex: nil, previousHash: nil)
                    if case .success = try readFrame(at: candidate, fileSize: fileSize, expecting: any) {
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
