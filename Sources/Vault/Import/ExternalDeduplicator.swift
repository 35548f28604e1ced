import BinaryCoding
import EventLog

/// Exact deduplication in bounded memory, for imports too large to keep every identity in
/// memory: events are spilled in file order to sealed scratch files with their identity hashes;
/// the hashes are sorted in runs of at most `runLength`, merged with the sorted identities of what
/// the vault already holds, and the events that are new are replayed in their original order.
///
/// Memory: one run buffer (16 bytes a hash), one block per run while merging, and two bits per
/// spilled event. The scratch files hold only sealed bytes and are unlinked from the start.
final class ExternalDeduplicator {
    /// Runs are merged side by side, one block of each in memory: 64 KiB keeps that small.
    static let runBlockSize = 64 << 10

    let directory: String
    let runLength: Int
    /// Sorted runs of hashes already in the vault (or kept earlier in this command).
    private var existingRuns: [ScratchFile] = []
    /// Sorted runs of (hash, sequence) of the events spilled since the last `resolve`.
    private var pendingRuns: [ScratchFile] = []
    private var buffer: [(hash: UInt64, sequence: UInt64)] = []
    private var spill: ScratchFile
    private var nested = BitSet()
    private var spilled: UInt64 = 0

    private var existingBuffer: [UInt64] = []

    init(directory: String, existing sortedHashes: [UInt64], runLength: Int = 1 << 19) throws {
        self.directory = directory
        self.runLength = runLength
        spill = try ScratchFile(in: directory)
        try writeExistingRun(sortedHashes)
        buffer.reserveCapacity(runLength)
    }

    /// Adds the identity of something the vault already holds (read from the log).
    func addExisting(hash: UInt64) throws {
        existingBuffer.append(hash)
        if existingBuffer.count >= runLength * 2 { try flushExisting() }
    }

    private func flushExisting() throws {
        guard !existingBuffer.isEmpty else { return }
        existingBuffer.sort()
        try writeExistingRun(existingBuffer)
        existingBuffer.removeAll(keepingCapacity: true)
    }

    private func writeExistingRun(_ sortedHashes: [UInt64]) throws {
        guard !sortedHashes.isEmpty else { return }
        let run = try ScratchFile(in: directory, blockSize: Self.runBlockSize)
        var record = [UInt8](repeating: 0, count: 8)
        for h in sortedHashes {
            withUnsafeBytes(of: h.littleEndian) { record.replaceSubrange(0..<8, with: $0) }
            try run.append(record)
        }
        try run.finishWriting()
        existingRuns.append(run)
    }

    /// Sets an event aside, with its identity hash and the key it is to be sealed with, until
    /// `resolve`.
    func add(hash: UInt64, nested isNested: Bool, keyID: UInt32, bytes: [UInt8]) throws {
        buffer.append((hash, spilled))
        if isNested { nested.insert(Int(spilled)) }
        var record = [UInt8]()
        record.reserveCapacity(4 + bytes.count)
        withUnsafeBytes(of: keyID.littleEndian) { record.append(contentsOf: $0) }
        record.append(contentsOf: bytes)
        try spill.append(record)
        spilled += 1
        if buffer.count >= runLength { try writeRun() }
    }

    private func writeRun() throws {
        guard !buffer.isEmpty else { return }
        buffer.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.sequence < $1.sequence }
        let run = try ScratchFile(in: directory, blockSize: Self.runBlockSize)
        var record = [UInt8](repeating: 0, count: 16)
        for entry in buffer {
            withUnsafeBytes(of: entry.hash.littleEndian) { record.replaceSubrange(0..<8, with: $0) }
            withUnsafeBytes(of: entry.sequence.littleEndian) { record.replaceSubrange(8..<16, with: $0) }
            try run.append(record)
        }
        try run.finishWriting()
        pendingRuns.append(run)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Decides which spilled events are new (not in the vault, first of their identity in this
    /// command) and hands those to `append` in their original order. Returns the counts; nested
    /// duplicates (records repeated inside correlations) are not counted.
    func resolve(append: (UInt32, [UInt8]) throws -> Void) throws -> (added: Int, duplicates: Int) {
        try flushExisting()
        try writeRun()
        var keep = BitSet()
        var merge = RunMerger(existing: existingRuns.map { $0.makeReader() }, pending: pendingRuns.map { $0.makeReader() })
        var groupHash: UInt64?
        var groupExists = false
        var groupKept = false
        while let entry = try merge.next() {
            if entry.hash != groupHash {
                groupHash = entry.hash
                groupExists = false
                groupKept = false
            }
            guard let sequence = entry.sequence else {
                groupExists = true
                continue
            }
            // Existing runs sort before pending ones for the same hash, and pending by sequence.
            if !groupExists && !groupKept {
                keep.insert(Int(sequence))
                groupKept = true
            }
        }
        var added = 0, duplicates = 0
        var sequence = 0
        try spill.forEachRecord { bytes in
            if keep.contains(sequence) {
                try append(UInt32(littleEndianBytes: bytes.prefix(4))!, Array(bytes.dropFirst(4)))
                added += 1
            } else if !nested.contains(sequence) {
                duplicates += 1
            }
            sequence += 1
        }
        // What this command added is now part of what exists; the rest was there already.
        existingRuns += pendingRuns
        pendingRuns = []
        spill = try ScratchFile(in: directory)
        nested = BitSet()
        spilled = 0
        return (added, duplicates)
    }
}

/// Merges sorted runs: existing ones hold hashes, pending ones (hash, sequence). Entries come out
/// by hash; for one hash, existing entries first, then pending ones by sequence.
private struct RunMerger {
    struct Entry {
        var hash: UInt64
        var sequence: UInt64?
    }

    private struct Cursor {
        var reader: ScratchFile.Reader
        var isExisting: Bool
        var block: [UInt8] = []
        var offset = 0
        var current: Entry?
    }

    private var cursors: [Cursor]

    init(existing: [ScratchFile.Reader], pending: [ScratchFile.Reader]) {
        cursors = existing.map { Cursor(reader: $0, isExisting: true) } + pending.map { Cursor(reader: $0, isExisting: false) }
    }

    /// Order: hash, then existing before pending, then sequence.
    private static func key(_ e: Entry) -> (UInt64, UInt64, UInt64) {
        (e.hash, e.sequence == nil ? 0 : 1, e.sequence ?? 0)
    }

    mutating func next() throws -> Entry? {
        for i in cursors.indices where cursors[i].current == nil { try advance(i) }
        var best: Int?
        for i in cursors.indices {
            guard let e = cursors[i].current else { continue }
            if let b = best, let be = cursors[b].current, !(Self.key(e) < Self.key(be)) { continue }
            best = i
        }
        guard let b = best else { return nil }
        let entry = cursors[b].current
        cursors[b].current = nil
        return entry
    }

    /// Loads the next entry of cursor `i`, reading its next block when needed.
    private mutating func advance(_ i: Int) throws {
        while true {
            if cursors[i].offset < cursors[i].block.count {
                var entry: Entry?
                let isExisting = cursors[i].isExisting
                cursors[i].block.withUnsafeBytes { raw in
                    // Each record is a one-byte length (8: hash; 16: hash and sequence) and its bytes.
                    // Runs of earlier files join the existing ones with their sequences, which no
                    // longer matter there.
                    let o = cursors[i].offset
                    let size = Int(raw[o])
                    let hash = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: o + 1, as: UInt64.self))
                    let sequence = size == 16 && !isExisting ? UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: o + 9, as: UInt64.self)) : nil
                    entry = Entry(hash: hash, sequence: sequence)
                    cursors[i].offset = o + 1 + size
                }
                cursors[i].current = entry
                return
            }
            guard let block = try cursors[i].reader.nextBlock() else { return }
            cursors[i].block = block
            cursors[i].offset = 0
        }
    }
}

/// A growable set of small integers, one bit each.
struct BitSet {
    private var words: [UInt64] = []

    mutating func insert(_ i: Int) {
        let w = i >> 6
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: w - words.count + 1)) }
        words[w] |= 1 << UInt64(i & 63)
    }

    func contains(_ i: Int) -> Bool {
        let w = i >> 6
        return w < words.count && words[w] & (1 << UInt64(i & 63)) != 0
    }
}
