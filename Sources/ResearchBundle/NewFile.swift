import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file created new (never replacing one), readable by its owner only: key files, bundles and
/// the files a bundle opens into. Writes go through whole; `sync` makes them durable. The
/// descriptor is this object's: closed in `deinit`.
final class NewFile {
    let path: String
    private let fd: Int32

    init(creating path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw errno == EEXIST ? BundleError.fileExists(path: path) : BundleError.cannotWrite(path: path, reason: "cannot be created: \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.fd = fd
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw BundleError.cannotWrite(path: path, reason: "could not be written: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    func write(_ bytes: some ContiguousBytes) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    func sync() throws {
        guard fsync(fd) == 0 else { throw BundleError.cannotWrite(path: path, reason: "could not be synced: \(String(cString: strerror(errno)))") }
    }

    deinit { _ = systemClose(fd) }

    /// Creates `path` holding `bytes` (synced unless `sync` is false); on any failure nothing is
    /// left at `path`.
    static func write(_ bytes: some ContiguousBytes, to path: String, sync: Bool = true) throws {
        let file = try NewFile(creating: path)
        do {
            try file.write(bytes)
            if sync { try file.sync() }
        } catch {
            unlink(path)
            throw error
        }
    }
}

#if canImport(Glibc)
private let systemWrite = Glibc.write
private let systemClose = Glibc.close
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
private let systemClose = Darwin.close
#endif
