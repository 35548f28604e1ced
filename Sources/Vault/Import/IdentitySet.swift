import BinaryCoding
import CMemoryHints
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The identities of the data events in a vault, as a multiset: 62-bit hashes in an
/// open-addressing table (linear probing, at most 70% full), 8 bytes a slot, one slot per copy.
/// A `Set<Int>` cost twice the memory and hashed every identity twice (docs/benchmarks-history.md).
///
/// Records identical in every field are distinct samples when one file holds them twice (two
/// glasses of water logged at once), and the same samples when a later export repeats them.
/// So each copy the vault holds matches at most one record of a file: the two high bits of a
/// slot say whether the file being imported has used that copy, and `endFile()` clears them.
/// The hashes are `IdentityHasher`'s.
struct IdentitySet {
    /// What a record of the file being imported turned out to be.
    enum Outcome: Equatable {
        /// Not in the vault: to be written.
        case added
        /// A copy the vault held before this file.
        case duplicate
        /// The same record as one this file already gave (a correlation's member and its
        /// top-level copy): neither written nor counted again.
        case copy
    }

    /// How the file being imported has used a copy (the slot's two high bits).
    private enum Use: UInt64 {
        case unused = 0
        case topLevel = 1
        case nested = 2
    }

    fileprivate static let keyBits: UInt64 = (1 << 62) - 1

    /// The slots, in memory of their own (`SlotTable`); copied before a change when shared.
    private var table: SlotTable
    private var slots: UnsafeMutableBufferPointer<UInt64> { table.slots }
    private var mask: Int
    private(set) var count = 0
    /// The slots the file being imported has marked, so that `endFile` clears those and does not
    /// pass over the whole table (a device folder's 545 small files spent 7 % of the import's
    /// session thread there). Nil once the table grew (the slots moved) or the list passed an
    /// eighth of the table's slots: the file's end then passes over them all.
    private var marked: [Int]? = []

    init(expected: Int = 0, maximumSlots: Int = .max) {
        var capacity = 1024
        while capacity * 7 / 10 < expected && capacity < maximumSlots { capacity <<= 1 }
        table = SlotTable(count: capacity)
        table.populateInBackground()
        mask = capacity - 1
    }

    /// Makes the table this set's own before a change (a copy of the set shares it until then).
    private mutating func own() {
        if !isKnownUniquelyReferenced(&table) { table = table.copy() }
    }

    // MARK: Copies the vault holds

    /// Adds one copy of an identity hash (from `hash(_:)` or `legacyHash`), unused by this file.
    mutating func addExisting(hash key: UInt64) {
        own()
        insert(key, .unused)
    }

    // MARK: Records of the file being imported

    /// Decides a top-level record: the first copy this file has not used yet is its duplicate; a
    /// copy a correlation of this file added is the same record; otherwise a legacy-scheme copy
    /// (`legacy`, when the vault has any) can be its duplicate; else it is new and its identity
    /// is added.
    mutating func matchTopLevel(_ key: UInt64, legacy: UInt64?) -> Outcome {
        own()
        if let outcome = useCopy(of: key) { return outcome }
        if let legacy, let outcome = useCopy(of: legacy) { return outcome }
        insert(key, .topLevel)
        return .added
    }

    /// Decides a record nested in a correlation (the export lists it at top level too): any copy
    /// this file used is the same record; an unused copy makes it a duplicate; else it is new.
    mutating func matchNested(_ key: UInt64, legacy: UInt64?) -> Outcome {
        own()
        if let outcome = touchCopy(of: key) { return outcome }
        if let legacy, let outcome = touchCopy(of: legacy) { return outcome }
        insert(key, .nested)
        return .added
    }

    /// Asks for the slot where a lookup of `key` starts, so that a lookup made a little later does
    /// not wait for memory (`PendingAdmits`).
    func prefetch(_ key: UInt64) {
        hv_prefetch(slots.baseAddress! + (Int(truncatingIfNeeded: key) & mask))
    }

    /// Ends a file: what it used is held by the vault, for the next file to match again.
    mutating func endFile() {
        own()
        if let marked {
            for i in marked { slots[i] &= Self.keyBits }
        } else {
            for i in slots.indices where slots[i] > Self.keyBits { slots[i] &= Self.keyBits }
        }
        marked = []
    }

    /// Notes that slot `i` is marked by the file being imported.
    private mutating func mark(_ i: Int) {
        guard marked != nil else { return }
        if marked!.count >= slots.count / 8 { marked = nil } else { marked!.append(i) }
    }

    /// The first copy of `key` a top-level record can take: unused (a duplicate) or taken by a
    /// nested record (a copy). Copies already taken by top-level records are skipped.
    private mutating func useCopy(of key: UInt64) -> Outcome? {
        var i = Int(truncatingIfNeeded: key) & mask
        while true {
            let slot = slots[i]
            if slot == 0 { return nil }
            if slot & Self.keyBits == key {
                switch Use(rawValue: slot >> 62) {
                case .unused:
                    slots[i] = key | Use.topLevel.rawValue << 62
                    mark(i)
                    return .duplicate
                case .nested:
                    slots[i] = key | Use.topLevel.rawValue << 62
                    return .copy
                case .topLevel, .none:
                    break
                }
            }
            i = (i + 1) & mask
        }
    }

    /// The first copy of `key` for a nested record: unused (a duplicate, now taken) or taken by
    /// this file (a copy).
    private mutating func touchCopy(of key: UInt64) -> Outcome? {
        var i = Int(truncatingIfNeeded: key) & mask
        while true {
            let slot = slots[i]
            if slot == 0 { return nil }
            if slot & Self.keyBits == key {
                if slot >> 62 == Use.unused.rawValue {
                    slots[i] = key | Use.nested.rawValue << 62
                    mark(i)
                    return .duplicate
                }
                return .copy
            }
            i = (i + 1) & mask
        }
    }

    private mutating func insert(_ key: UInt64, _ use: Use) {
        if (count + 1) * 10 > slots.count * 7 { grow() }
        var i = Int(truncatingIfNeeded: key) & mask
        while slots[i] != 0 { i = (i + 1) & mask }
        slots[i] = key | use.rawValue << 62
        if use != .unused { mark(i) }
        count += 1
    }

    private mutating func grow() {
        marked = nil
        let oldTable = table
        let old = oldTable.slots
        table = SlotTable(count: old.count * 2)
        mask = slots.count - 1
        // Copies of one key keep their order: the old slots are read round from an empty one, so
        // a run that wraps past the table's end is read in probe order too.
        withExtendedLifetime(oldTable) {
            let start = old.firstIndex(of: 0) ?? 0
            for k in 0..<old.count {
                let slot = old[(start + k) & (old.count - 1)]
                guard slot != 0 else { continue }
                var i = Int(truncatingIfNeeded: slot & Self.keyBits) & mask
                while slots[i] != 0 { i = (i + 1) & mask }
                slots[i] = slot
            }
        }
    }

    // MARK: Memory

    /// Every identity in the table, one per copy, sorted: where the external deduplication
    /// starts from.
    func sortedHashes() -> [UInt64] {
        var all = [UInt64]()
        all.reserveCapacity(count)
        for slot in slots where slot != 0 { all.append(slot & Self.keyBits) }
        all.sort()
        return all
    }

    /// The copies the file being imported has used so far (its records decided in memory),
    /// with whether a nested record used them: handed on when identities move out of memory
    /// in the middle of a file. A lazy view of the table (no copy of it is made).
    func copiesInUse() -> some Sequence<(hash: UInt64, nested: Bool)> {
        let table = self.table
        return table.slots.lazy.filter { $0 > Self.keyBits }.map { slot in
            withExtendedLifetime(table) { (slot & Self.keyBits, slot >> 62 == Use.nested.rawValue) }
        }
    }

    /// Slots the table has now (8 bytes each).
    var capacity: Int { slots.count }

    /// Whether `adding` more inserts (one by default) would grow the table past `slots` slots.
    func wouldGrow(beyond slotLimit: Int, adding: Int = 1) -> Bool {
        (count + adding) * 10 > slots.count * 7 && slots.count >= slotLimit
    }

    /// Frees the table.
    mutating func releaseStorage() {
        marked = nil
        table = SlotTable(count: 1)
        mask = 0
        count = 0
    }
}

/// The identity hash of an import session's events, kept apart from its `IdentitySet` (hashing
/// an event does not touch the table, an access checked at run time).
///
/// It is keyed with a random seed per session, so two vaults' identities are unrelated and inputs
/// cannot be crafted to collide; two different events share a hash with probability about
/// n²/2⁶³ (2·10⁻⁶ at four and a half million events).
struct IdentityHasher {
    let seed = UInt64.random(in: 1...UInt64.max)

    /// The identity hash of an event's identifying bytes: 62 bits, never 0 (that marks an empty
    /// slot), so hashes compare the same inside and outside the table.
    func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let h = WordHash.hash(bytes, seed: seed) & IdentitySet.keyBits
        return h == 0 ? 1 : h
    }

    /// The hash of the legacy scheme's identity (`EventIdentity.legacyPrefixLength`), in its own
    /// domain: `kind` stands for the encoding's kind byte, so that a kind-22 correlation
    /// compares with a kind-11 one.
    func legacyHash(kind: UInt8, prefix bytes: UnsafeRawBufferPointer) -> UInt64 {
        let body = UnsafeRawBufferPointer(rebasing: bytes[2...])
        let h = WordHash.hash(body, seed: seed ^ (0x5851_F42D_4C95_7F2D &* UInt64(kind))) & IdentitySet.keyBits
        return h == 0 ? 1 : h
    }
}

/// The memory of an identity table: zeroed, and asked of the kernel in 2 MiB pages
/// (`MADV_HUGEPAGE`) once it spans one. A lookup lands on a random slot of tens of MiB; with 4 KiB
/// pages each also missed the processor's page-table cache, and a year of FIT files' import ran
/// 10 % slower (glibc's `glibc.malloc.hugetlb=1` tunable, measured: docs/benchmarks.md).
///
/// A table of 2 MiB or more is mapped from the kernel, which hands it out zeroed and unbacked:
/// writing its zeros here took ~100 ms for 32 MiB on this machine (virtual memory backed on first
/// touch), alone on one core before the parse began. `populateInBackground` backs it on a
/// thread of its own while the import starts instead.
final class SlotTable: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<UInt64>
    /// The mapping, for a table mapped from the kernel (nil: from malloc).
    private let mapping: UnsafeMutableRawBufferPointer?
    private static let hugePage = 2 << 20

    init(count: Int) {
        let bytes = count * MemoryLayout<UInt64>.stride
        if bytes >= Self.hugePage {
            // Mapped a huge page larger and trimmed, so that it starts on a huge page's boundary.
            let length = bytes + Self.hugePage
            guard let raw = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                  raw != UnsafeMutableRawPointer(bitPattern: -1) else {
                fatalError("out of memory for an identity table of \(bytes) bytes")
            }
            let start = (Int(bitPattern: raw) + Self.hugePage - 1) & ~(Self.hugePage - 1)
            let head = start - Int(bitPattern: raw)
            if head > 0 { _ = munmap(raw, head) }
            if length - head - bytes > 0 { _ = munmap(UnsafeMutableRawPointer(bitPattern: start + bytes), length - head - bytes) }
            let base = UnsafeMutableRawPointer(bitPattern: start)!
            _ = madvise(base, bytes, MADV_HUGEPAGE)
            mapping = UnsafeMutableRawBufferPointer(start: base, count: bytes)
            slots = UnsafeMutableBufferPointer(start: base.assumingMemoryBound(to: UInt64.self), count: count)
        } else {
            var raw: UnsafeMutableRawPointer?
            guard posix_memalign(&raw, 64, bytes) == 0, let raw else {
                fatalError("out of memory for an identity table of \(bytes) bytes")
            }
            memset(raw, 0, bytes)
            mapping = nil
            slots = UnsafeMutableBufferPointer(start: raw.assumingMemoryBound(to: UInt64.self), count: count)
        }
    }

    /// Backs a mapped table's pages on a thread of its own (`MADV_POPULATE_WRITE`, Linux 5.14 and
    /// later; elsewhere each page is backed when first written). What it backs keeps its contents:
    /// lookups and inserts may run meanwhile. The table lives until the thread is done.
    func populateInBackground() {
        guard mapping != nil else { return }
        Thread.detachNewThread { [self] in
            // The table is captured: it stays mapped while the thread runs.
            _ = madvise(mapping!.baseAddress, mapping!.count, 23 /* MADV_POPULATE_WRITE */)
        }
    }

    func copy() -> SlotTable {
        let copy = SlotTable(count: slots.count)
        _ = copy.slots.initialize(fromContentsOf: slots)
        return copy
    }

    deinit {
        if let mapping { _ = munmap(mapping.baseAddress, mapping.count) } else { free(slots.baseAddress) }
    }
}
