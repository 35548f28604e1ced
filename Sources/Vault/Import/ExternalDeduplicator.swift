import BinaryCoding
import EventLog

/// Exact deduplication in bounded memory, for imports too large to keep every identity in
/// memory: events are spilled in file order to sealed scratch files with their identity hashes;
/// the hashes are sorted in runs of at most `runLength`, merged with the sorted identities of what
/// the vault already holds, and the events that are new are replayed in their original order.
///
/// The rule is `IdentitySet`'s, counted instead of marked: for one identity the vault holds `e`
/// copies, so the file's first `e` top-level records with it are duplicates and the rest are new;
/// a nested record is the same record as any top-level one of the file, else a duplicate of a
/// copy, else new. Records still new are then matched by their legacy-scheme identity against
/// the vault's legacy copies, when it has any.
///
/// Files can be decided one by one or many in one `resolve` (a device folder of hundreds of
/// files): `endFile` marks where the next begins, and one merge decides each file as if the ones
/// before it had been resolved already (what a file adds is a copy the files after it match).
/// One merge per file read every identity once per file: a folder of 180 FIT files spent most of
/// its import there (docs/benchmarks-history.md, "FIT import").
///
/// Memory: one run buffer (16 bytes a hash; two when legacy identities are kept), one block per
/// run while merging, and a few bits per spilled event. The scratch files hold only sealed bytes
/// and are unlinked from the start.
final class ExternalDeduplicator {
    /// Runs are merged side by side, one block of each in memory: 64 KiB keeps that small.
    static let runBlockSize = 64 << 10

    let directory: String
    let runLength: Int
    /// Sorted runs of hashes already in the vault (or kept earlier in this command), one per copy.
    private var existingRuns: [ScratchFile] = []
    /// Sorted runs of (hash, sequence) of the events spilled since the last `resolve`.
    private var pendingRuns = SequencedRuns()
    /// The same for the events' legacy-scheme hashes, when the vault holds legacy identities.
    private var legacyRuns = SequencedRuns()
    private var spill: ScratchFile
    private var nested = BitSet()
    /// Sequences of records decided in memory before identities moved here, in this file: they
    /// used copies (or added them), which later records of the file must not use again.
    private var predecided = BitSet()
    /// The sequence of the spill file's first record (the number of predecided records).
    private var firstSpilled: UInt64 = 0
    private var spilled: UInt64 = 0
    /// The sequence each file of the batch starts at; the first file's is 0 (its records decided
    /// in memory before identities moved here come first).
    private var fileStarts: [UInt64] = [0]

    private var existingBuffer: [UInt64] = []
    /// Set by a resolve that did not keep what it added: nothing more may come.
    private var closed = false

    /// Starts from the copies the vault holds (`sortedHashes`) and, when identities move out of
    /// memory in the middle of a file, the copies that file's records already used (`inUse`,
    /// read once: a lazy view of the table moving out keeps it from being copied).
    ///
    /// The sorted hashes are written to a scratch run and let go before `inUse` is read, so that
    /// the move holds the table, then either them or the runs' buffers, never all three.
    init<InUse: Sequence<(hash: UInt64, nested: Bool)>>(directory: String, existing sortedHashes: consuming [UInt64], inUse: InUse,
                                                        runLength: Int = 1 << 19) throws {
        self.directory = directory
        self.runLength = runLength
        spill = try ScratchFile(in: directory)
        try writeExistingRun(sortedHashes)
        _ = consume sortedHashes
        for (hash, isNested) in inUse {
            // In both passes: a copy used in memory is used, whichever scheme its hash is of.
            try pendingRuns.add(hash: hash, sequence: spilled, runLength: runLength, directory: directory)
            try legacyRuns.add(hash: hash, sequence: spilled, runLength: runLength, directory: directory)
            predecided.insert(Int(spilled))
            if isNested { nested.insert(Int(spilled)) }
            spilled += 1
        }
        firstSpilled = spilled
    }

    /// Starts from the copies the vault holds, sorted, at the start of a file.
    convenience init(directory: String, existing sortedHashes: consuming [UInt64], runLength: Int = 1 << 19) throws {
        try self.init(directory: directory, existing: sortedHashes, inUse: EmptyCollection(), runLength: runLength)
    }

    /// Adds one copy of something the vault already holds (read from the log).
    func addExisting(hash: UInt64) throws {
        precondition(!closed, "an external deduplicator takes nothing after its last file")
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

    /// Sets an event aside, with its identity hash (and legacy-scheme hash, when the vault holds
    /// legacy identities) and the key it is to be sealed with, until `resolve`.
    func add(hash: UInt64, legacyHash: UInt64?, nested isNested: Bool, keyID: UInt32, bytes: [UInt8]) throws {
        precondition(!closed, "an external deduplicator takes nothing after its last file")
        try pendingRuns.add(hash: hash, sequence: spilled, runLength: runLength, directory: directory)
        if let legacyHash { try legacyRuns.add(hash: legacyHash, sequence: spilled, runLength: runLength, directory: directory) }
        if isNested { nested.insert(Int(spilled)) }
        var record = [UInt8]()
        record.reserveCapacity(4 + bytes.count)
        withUnsafeBytes(of: keyID.littleEndian) { record.append(contentsOf: $0) }
        record.append(contentsOf: bytes)
        try spill.append(record)
        spilled += 1
    }

    /// Ends a file whose records are decided with the files after it, at the next `resolve`.
    func endFile() {
        precondition(!closed, "an external deduplicator takes nothing after its last file")
        fileStarts.append(spilled)
    }

    /// What `resolve` decided of one file's records set aside here (those decided in memory
    /// before identities moved here are not among them).
    struct FileCounts: Equatable {
        var added = 0
        var duplicates = 0
        /// Copies: a correlation's member and its top-level record, counted as neither.
        var repeats = 0
    }

    /// The file of the batch a record belongs to: the last one starting at or before it (a file
    /// that set nothing aside starts where the next does).
    private func fileIndex(of sequence: UInt64) -> Int {
        var low = 0, high = fileStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if fileStarts[middle] <= sequence { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Decides which spilled events are new and hands those to `append` in their original order.
    /// Returns the counts of each file since the last resolve (those `endFile` ended, then the
    /// current one), in order.
    ///
    /// Of the batch's files, only the last may have set legacy-scheme hashes aside (the session
    /// resolves at the end of every file once the vault shows legacy identities): a record
    /// matched to a legacy copy is not added, which changes what the files after it match.
    ///
    /// - Parameter keepingAdded: whether what is added becomes part of what exists, for the
    ///   files after this one. Without it (the command's last file) no run of the added events
    ///   is written, and the deduplicator takes nothing more.
    func resolve(keepingAdded: Bool = true, append: (UInt32, [UInt8]) throws -> Void) throws -> [FileCounts] {
        precondition(!closed, "an external deduplicator takes nothing after its last file")
        try flushExisting()
        var candidates = BitSet(capacity: Int(spilled))
        var counts = [FileCounts](repeating: FileCounts(), count: fileStarts.count)
        // Candidates in hash order, to become an existing run once the legacy pass has spoken.
        let candidateRun = keepingAdded ? try ScratchFile(in: directory, blockSize: Self.runBlockSize) : nil
        var record = [UInt8](repeating: 0, count: 16)
        // Pass 1, by whole identity, one group (hash) at a time and in constant memory. Existing
        // copies come first in a group, then the files' records in file order (predecided ones,
        // decided in memory before identities moved here, before the rest); each file's part of
        // the group is decided against the copies the vault held and the files before it added.
        var group = GroupState()
        func candidate(_ hash: UInt64, _ sequence: UInt64) throws {
            candidates.insert(Int(sequence))
            guard let candidateRun else { return }
            record.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: hash.littleEndian, toByteOffset: 0, as: UInt64.self)
                raw.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
            }
            try candidateRun.append(record)
        }
        func endFileInGroup() throws {
            guard let hash = group.hash else { return }
            // A file with only nested records of the group: the first is a duplicate of a copy, or new.
            if group.tops == 0, group.predecided == 0, let first = group.firstNested {
                if group.existing > 0 { counts[group.file].duplicates += 1 } else { try candidate(hash, first); group.added += 1 }
            }
            group.endFile()
        }
        try forEachEntry(pending: pendingRuns) { hash, sequence in
            if hash != group.hash {
                try endFileInGroup()
                group = GroupState()
                group.hash = hash
            }
            guard let sequence else {
                group.existing += 1
                return
            }
            let file = fileIndex(of: sequence)
            if file != group.file {
                try endFileInGroup()
                group.file = file
            }
            let isNested = nested.contains(Int(sequence))
            if predecided.contains(Int(sequence)) {
                group.predecided += 1
                if isNested { group.nestedInUse += 1 } else { group.tops += 1 }
                return
            }
            if isNested {
                if group.firstNested == nil { group.firstNested = sequence }
                return
            }
            group.tops += 1
            if group.tops <= group.existing {
                // The copy a nested record of this file took in memory is this record (a repeat).
                if group.nestedInUse > 0 { group.nestedInUse -= 1 } else { counts[file].duplicates += 1 }
            } else {
                try candidate(hash, sequence)
                group.added += 1
            }
        }
        try endFileInGroup()
        try candidateRun?.finishWriting()
        // Pass 2, by legacy identity: a record still new takes a legacy copy no earlier record
        // of its file (in memory or here) took.
        var demoted = BitSet()
        if !legacyRuns.isEmpty {
            var legacyGroup: (hash: UInt64?, copies: Int, file: Int, available: Int) = (nil, 0, 0, 0)
            try forEachEntry(pending: legacyRuns) { hash, sequence in
                if hash != legacyGroup.hash { legacyGroup = (hash, 0, 0, 0) }
                guard let sequence else {
                    legacyGroup.copies += 1
                    legacyGroup.available += 1
                    return
                }
                let file = fileIndex(of: sequence)
                if file != legacyGroup.file { (legacyGroup.file, legacyGroup.available) = (file, legacyGroup.copies) }
                if predecided.contains(Int(sequence)) {
                    legacyGroup.available -= 1
                } else if legacyGroup.available > 0, candidates.contains(Int(sequence)) {
                    demoted.insert(Int(sequence))
                    counts[file].duplicates += 1
                    legacyGroup.available -= 1
                }
            }
        }
        // What this command added is now part of what exists, one copy each.
        if let candidateRun {
            let keptRun = try ScratchFile(in: directory, blockSize: Self.runBlockSize)
            var keptAny = false
            try candidateRun.forEachRecord { entry in
                let sequence = UInt64(littleEndian: entry.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                if !demoted.contains(Int(sequence)) {
                    try keptRun.append(UnsafeRawBufferPointer(rebasing: entry[0..<8]))
                    keptAny = true
                }
            }
            try keptRun.finishWriting()
            if keptAny { existingRuns.append(keptRun) }
            try compactExistingRuns()
        } else {
            closed = true
            existingRuns = []
        }
        var sequence = Int(firstSpilled)
        var file = 0
        try spill.forEachRecord { bytes in
            while file + 1 < fileStarts.count, fileStarts[file + 1] <= UInt64(sequence) { file += 1 }
            if candidates.contains(sequence) && !demoted.contains(sequence) {
                try append(UInt32(littleEndianBytes: bytes.prefix(4))!, Array(bytes.dropFirst(4)))
                counts[file].added += 1
            }
            sequence += 1
        }
        for i in counts.indices {
            let end = i + 1 < fileStarts.count ? fileStarts[i + 1] : spilled
            let setAside = Int(end) - Int(max(fileStarts[i], firstSpilled))
            counts[i].repeats = max(setAside, 0) - counts[i].added - counts[i].duplicates
        }
        fileStarts = [0]
        pendingRuns = SequencedRuns()
        legacyRuns = SequencedRuns()
        spill = try ScratchFile(in: directory)
        nested = BitSet()
        predecided = BitSet()
        firstSpilled = 0
        spilled = 0
        return counts
    }

    /// Existing runs past which they are merged into one. Each file of an import adds a run (what
    /// it added), and every resolve merges all of them, picking each entry by a scan over the runs:
    /// a device folder of 180 FIT files spent three quarters of its import there. Merged every
    /// few files, the runs stay few; the merge costs one pass over them.
    static let compactionThreshold = 8

    private func compactExistingRuns() throws {
        guard existingRuns.count > Self.compactionThreshold else { return }
        var merge = RunMerger(existing: existingRuns.map { $0.makeReader() }, pending: [])
        let merged = try ScratchFile(in: directory, blockSize: Self.runBlockSize)
        var record = [UInt8](repeating: 0, count: 8)
        while let entry = try merge.next() {
            withUnsafeBytes(of: entry.hash.littleEndian) { record.replaceSubrange(0..<8, with: $0) }
            try merged.append(record)
        }
        try merged.finishWriting()
        existingRuns = [merged]
    }

    /// Merges `pending` with the existing runs and calls `body` with every entry in order: by
    /// hash, a hash's existing copies (sequence nil) first, then the file's records by sequence.
    private func forEachEntry(pending: SequencedRuns, _ body: (UInt64, UInt64?) throws -> Void) throws {
        var runs = pending
        try runs.flush(runLength: runLength, directory: directory)
        var merge = RunMerger(existing: existingRuns.map { $0.makeReader() }, pending: runs.runs.map { $0.makeReader() })
        while let entry = try merge.next() { try body(entry.hash, entry.sequence) }
    }
}

/// What pass 1 knows of the group (hash) it is in, and of the part of it one file gave.
private struct GroupState {
    var hash: UInt64?
    /// Copies the vault holds, and those the batch's earlier files added.
    var existing = 0
    /// The file whose records are being decided.
    var file = 0
    /// Records of that file taken as new.
    var added = 0
    /// Top-level records met so far, predecided ones included: each takes a copy while any is left.
    var tops = 0
    /// Records decided in memory before identities moved here.
    var predecided = 0
    /// Copies nested records took in memory, not yet matched by their top-level record.
    var nestedInUse = 0
    var firstNested: UInt64?

    /// What the file added exists for the next one; the per-file counts start again.
    mutating func endFile() {
        existing += added
        (added, tops, predecided, nestedInUse, firstNested) = (0, 0, 0, 0, nil)
    }
}

/// Sorted runs of (hash, sequence), written `runLength` entries at a time.
private struct SequencedRuns {
    private(set) var runs: [ScratchFile] = []
    private var buffer: [(hash: UInt64, sequence: UInt64)] = []

    var isEmpty: Bool { runs.isEmpty && buffer.isEmpty }

    mutating func add(hash: UInt64, sequence: UInt64, runLength: Int, directory: String) throws {
        if buffer.isEmpty { buffer.reserveCapacity(runLength) }
        buffer.append((hash, sequence))
        if buffer.count >= runLength { try flush(runLength: runLength, directory: directory) }
    }

    mutating func flush(runLength: Int, directory: String) throws {
        guard !buffer.isEmpty else { return }
        buffer.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.sequence < $1.sequence }
        let run = try ScratchFile(in: directory, blockSize: ExternalDeduplicator.runBlockSize)
        var record = [UInt8](repeating: 0, count: 16)
        for entry in buffer {
            withUnsafeBytes(of: entry.hash.littleEndian) { record.replaceSubrange(0..<8, with: $0) }
            withUnsafeBytes(of: entry.sequence.littleEndian) { record.replaceSubrange(8..<16, with: $0) }
            try run.append(record)
        }
        try run.finishWriting()
        runs.append(run)
        buffer.removeAll(keepingCapacity: true)
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

    init() {}

    /// A set with room for 0..<capacity without growing.
    init(capacity: Int) {
        words = [UInt64](repeating: 0, count: (max(capacity, 0) + 63) >> 6)
    }

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
