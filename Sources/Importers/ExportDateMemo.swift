import HealthModel

/// The export dates read last, with what they parsed to: consecutive records repeat their dates
/// (a step count, its distance and its energy share start, end and creation; a creation date is
/// often the end date), so most dates compare 25 bytes instead of parsing ten fields and
/// counting days from the civil calendar (7 % of the parser's instructions).
///
/// A shortcut only: a date of another length, or not among the last two, is parsed, and equal
/// bytes parse to equal timestamps.
struct ExportDateMemo {
    /// A 25-byte date (`2024-01-01 14:26:33 +0100`) as four overlapping words.
    private typealias Words = (UInt64, UInt64, UInt64, UInt64)

    private var slots: [(words: Words, parsed: HealthTimestamp?)] = []
    /// The slot the next miss replaces.
    private var next = 0

    /// `HealthTimestamp.parseExportDate(raw)`, remembered.
    mutating func parse(_ raw: UnsafeRawBufferPointer) -> HealthTimestamp? {
        guard raw.count == 25 else { return HealthTimestamp.parseExportDate(raw) }
        let words: Words = (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                            raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 17, as: UInt64.self))
        for slot in slots where slot.words.0 == words.0 && slot.words.1 == words.1 && slot.words.2 == words.2 && slot.words.3 == words.3 {
            return slot.parsed
        }
        let parsed = HealthTimestamp.parseExportDate(raw)
        if slots.count < 2 {
            slots.append((words, parsed))
        } else {
            slots[next] = (words, parsed)
            next ^= 1
        }
        return parsed
    }
}
