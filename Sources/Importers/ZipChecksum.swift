import CLibDeflate
import Foundation
import ZIPFoundation

/// The CRC-32 of a zip entry's contents, computed with libdeflate's `libdeflate_crc32` as the
/// chunks go by.
///
/// ZIPFoundation checks it with a table-driven Swift loop on Linux (it finds zlib's `crc32` only
/// where a module named `zlib` exists): a fifth of a ten-year import's time. The importer asks
/// ZIPFoundation to skip its check and makes the same one here. zlib's `crc32` (Debian's 1.2.13)
/// still spent 3.9 instructions a byte, 5 % of a one-year import; libdeflate's folds with
/// carry-less multiplication where the processor has it (docs/benchmarks-history.md).
struct ZipChecksum {
    private(set) var value: UInt32 = 0

    mutating func add(_ data: Data) {
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            value = libdeflate_crc32(value, base, raw.count)
        }
    }
}

extension ZipChecksum {
    /// Throws when the contents read do not match the CRC-32 `entry`'s header records.
    func check(_ entry: Entry, name: String) throws {
        guard value == entry.checksum else {
            throw ImportError.unreadable(path: name, reason: "the zip entry's contents do not match its CRC-32 (the zip is damaged)")
        }
    }
}
