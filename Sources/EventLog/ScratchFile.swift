import BinaryCoding
import SecureMemory

/// Temporary records on disk that no one can read: sealed in 1 MiB blocks (XChaCha20-Poly1305)
/// with a key that exists only in this process's memory, in a file unlinked as soon as it is
/// opened. A crash leaves nothing behind, and nothing readable is ever on disk.
///
/// Used where an operation's working set must not grow with its input (the importer's
/// deduplication of very large exports). Records are appended, then read back in order.
public final class ScratchFile {
    /// Plaintext bytes per sealed block, unless a file asks for another size.
    public static let blockSize = 1 << 20

    private let file: any StorageFile
    private let blockSize: Int
    private let key = SecretKey.random()
    private var pending: [UInt8] = []
    private var writeOffset: UInt64 = 0
    private var blocks: UInt64 = 0
    /// Records appended so far.
    public private(set) var count = 0

    /// Creates the file in `directory` (best on the vault's own file system) and unlinks it.
    /// A reader holds one block in memory: files read side by side want small blocks.
    public init(in directory: String, blockSize: Int = ScratchFile.blockSize, fileSystem: any FileSystem = POSIXFileSystem()) throws {
        self.blockSize = blockSize
        let path = directory + "/.scratch-" + Sodium.randomBytes(8).hex
        file = try fileSystem.open(path, mode: .createNew)
        try fileSystem.remove(path)
        pending.reserveCapacity(blockSize + 64)
    }

    /// Appends one record.
    public func append(_ record: UnsafeRawBufferPointer) throws {
        Varint.encode(UInt64(record.count), into: &pending)
        pending.append(contentsOf: record)
        count += 1
        if pending.count >= blockSize { try flush() }
    }

    /// Appends one record.
    public func append(_ record: [UInt8]) throws {
        try record.withUnsafeBytes { try append($0) }
    }

    /// Seals and writes what is buffered: block = length u32 || nonce || ciphertext, the block's
    /// index as associated data so that blocks cannot be reordered.
    private func flush() throws {
        guard !pending.isEmpty else { return }
        let nonce = Sodium.randomBytes(LogFormat.nonceSize)
        var block = [UInt8](repeating: 0, count: 4 + LogFormat.nonceSize + pending.count + LogFormat.tagSize)
        withUnsafeBytes(of: UInt32(pending.count + LogFormat.tagSize).littleEndian) { block.replaceSubrange(0..<4, with: $0) }
        block.replaceSubrange(4..<(4 + LogFormat.nonceSize), with: nonce)
        block.withUnsafeMutableBytes { out in
            pending.withUnsafeBytes { plain in
                nonce.withUnsafeBytes { n in
                    withUnsafeBytes(of: blocks.littleEndian) { ad in
                        FrameCipher.seal(plain, header: ad, nonce: n, key: key,
                                         into: UnsafeMutableRawBufferPointer(rebasing: out[(4 + LogFormat.nonceSize)...]))
                    }
                }
            }
        }
        try block.withUnsafeBytes { try file.write(at: writeOffset, $0) }
        writeOffset += UInt64(block.count)
        blocks += 1
        pending.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with every record in order. Appending after reading starts is not supported.
    public func forEachRecord(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try flush()
        var reader = makeReader()
        while let block = try reader.nextBlock() {
            try block.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    guard let length = Varint.decode(raw, offset: &offset), length <= UInt64(raw.count - offset) else {
                        throw EventLogError.damaged(path: "scratch file", offset: reader.offset, defect: .malformedPayload)
                    }
                    try body(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + Int(length))]))
                    offset += Int(length)
                }
            }
        }
    }

    /// Reads blocks one at a time, for merging several files at once.
    public func makeReader() -> Reader {
        Reader(scratch: self)
    }

    /// Flushes buffered records so that a reader sees them all.
    public func finishWriting() throws { try flush() }

    /// Sequential access to a scratch file's blocks.
    public struct Reader {
        let scratch: ScratchFile
        private(set) var offset: UInt64 = 0
        private var index: UInt64 = 0

        init(scratch: ScratchFile) { self.scratch = scratch }

        /// The next block's plaintext (whole records), or nil at the end.
        public mutating func nextBlock() throws -> [UInt8]? {
            guard offset < scratch.writeOffset else { return nil }
            let lengthBytes = try scratch.file.readBytes(at: offset, count: 4)
            let length = Int(lengthBytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian)
            guard length >= LogFormat.tagSize, length <= Self.maxBlock else {
                throw EventLogError.damaged(path: "scratch file", offset: offset, defect: .payloadTooLarge(UInt32(clamping: length)))
            }
            let rest = try scratch.file.readBytes(at: offset + 4, count: LogFormat.nonceSize + length)
            guard rest.count == LogFormat.nonceSize + length else {
                throw EventLogError.damaged(path: "scratch file", offset: offset, defect: .truncatedPayload)
            }
            var plain = [UInt8](repeating: 0, count: length - LogFormat.tagSize)
            let ok = rest.withUnsafeBytes { raw in
                plain.withUnsafeMutableBytes { out in
                    withUnsafeBytes(of: index.littleEndian) { ad in
                        FrameCipher.open(UnsafeRawBufferPointer(rebasing: raw[LogFormat.nonceSize...]), header: ad,
                                         nonce: UnsafeRawBufferPointer(rebasing: raw[..<LogFormat.nonceSize]), key: scratch.key, into: out)
                    }
                }
            }
            guard ok else { throw EventLogError.damaged(path: "scratch file", offset: offset, defect: .authenticationFailed) }
            offset += UInt64(4 + rest.count)
            index += 1
            return plain
        }

        // A block ends with the record that filled it, which may be as large as an event can be.
        static let maxBlock = ScratchFile.blockSize + Int(LogFormat.maxPayloadLength)
    }
}

@available(*, unavailable)
extension ScratchFile: Sendable {}
