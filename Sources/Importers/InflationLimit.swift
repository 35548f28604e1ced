import ZIPFoundation

/// Refuses a zip entry that inflates far beyond what real exports do: a zip bomb.
///
/// Real Apple Health exports deflate 5–20 to 1 (the fixtures: 5.5 and 7.6; generated ones 16).
/// Past `freeBytes`, an entry may inflate to at most `maximumRatio` times its compressed size and
/// never beyond the size its header declares. Import streams in constant memory either way; the
/// limit keeps a 10 MB file from holding the importer for minutes.
struct InflationLimit {
    static let maximumRatio: UInt64 = 100
    static let freeBytes: UInt64 = 16 << 20

    let name: String
    let compressed: UInt64
    let declared: UInt64
    private(set) var inflated: UInt64 = 0

    init(entry: Entry, name: String) {
        self.name = name
        compressed = UInt64(entry.compressedSize)
        declared = UInt64(entry.uncompressedSize)
    }

    /// Counts `count` more inflated bytes; throws once the entry is over its limit.
    mutating func add(_ count: Int) throws {
        inflated += UInt64(count)
        if inflated > declared {
            throw ImportError.unreadable(path: name, reason: "the zip entry inflates to more than the \(declared) bytes its header declares")
        }
        // Judged by the declared size (never below what inflated so far: that threw above), so an
        // honest bomb is refused at its first chunk and one that lies by the check above.
        if declared > Self.freeBytes, declared / max(compressed, 1) > Self.maximumRatio {
            throw ImportError.unreadable(
                path: name,
                reason: "the zip entry inflates to more than \(Self.maximumRatio) times its compressed size (\(compressed) bytes); refused as a zip bomb")
        }
    }
}
