import CPageCipher
import CSQLite
import SecureMemory

/// The page-encrypting SQLite VFS (`Sources/CPageCipher`) registered under one key, for as long as
/// this object lives. Every file SQLite opens through it (the database and its journal) is
/// encrypted block by block; docs/projections.md describes the format.
package final class PageCipherVFS {
    /// The name SQLite knows the VFS by (unique per instance).
    package let name: String
    /// Bytes of a block: the read models' page size.
    package static let blockSize = 4096

    package init(key: SecretKey) throws {
        name = "healthvault-pages-" + RandomBytes.make(8).hex
        let rc = key.withUnsafeBytes { bytes in
            hv_page_vfs_register(name, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(Self.blockSize))
        }
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "could not register the page cipher") }
    }

    /// Whether a database page read through this VFS failed authentication (damage, another key).
    package var metDamage: Bool { hv_page_vfs_failures(name) > 0 }

    deinit {
        hv_page_vfs_unregister(name)
    }

    /// Overwrites the file at `path` with zeros and syncs it (a missing file is fine); returns errno or 0.
    package static func wipe(_ path: String) -> Int32 {
        hv_page_wipe_file(path)
    }
}

@available(*, unavailable)
extension PageCipherVFS: Sendable {}
