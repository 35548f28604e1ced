import CFileCopy
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `open` and `rename` under names that do not collide with the methods below.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    Glibc.open(path, flags, mode)
    #else
    Darwin.open(path, flags, mode)
    #endif
}

private func systemRename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    Glibc.rename(source, destination)
    #else
    Darwin.rename(source, destination)
    #endif
}

/// The real file system, through POSIX calls. Every failing call becomes `StorageError.io`
/// naming the operation and the path.
public struct POSIXFileSystem: FileSystem {
    public init() {}

    public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
        case .createIfMissing: flags = O_RDWR | O_CREAT
        }
        let fd = systemOpen(path, flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw StorageError.alreadyExists(path: path) }
            if code == ENOENT { throw StorageError.notFound(path: path) }
            throw StorageError.io(operation: "open", path: path, errno: code)
        }
        return POSIXFile(descriptor: fd, path: path)
    }

    public func rename(_ source: String, to destination: String) throws {
        guard systemRename(source, destination) == 0 else {
            throw StorageError.io(operation: "rename", path: source, errno: errno)
        }
    }

    public func link(_ source: String, to destination: String) throws {
        guard Glibc.link(source, destination) == 0 else {
            if errno == EEXIST { throw StorageError.alreadyExists(path: destination) }
            throw StorageError.io(operation: "link", path: destination, errno: errno)
        }
    }

    public func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw StorageError.io(operation: "unlink", path: path, errno: errno)
        }
    }

    public func syncDirectory(_ path: String) throws {
        let fd = systemOpen(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw StorageError.io(operation: "open directory", path: path, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StorageError.io(operation: "fsync directory", path: path, errno: errno) }
        // (On Darwin a directory fsync orders the rename; F_FULLFSYNC on the files covers the media.)
    }

    public func createDirectory(_ path: String) throws {
        if exists(path) { return }
        let parent = directoryName(of: path)
        if parent != path, parent != ".", parent != "/", !exists(parent) { try createDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw StorageError.io(operation: "mkdir", path: path, errno: errno)
        }
    }

    public func removeDirectory(_ path: String) throws {
        guard rmdir(path) == 0 || errno == ENOENT else {
            throw StorageError.io(operation: "rmdir", path: path, errno: errno)
        }
    }

    public func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    public func contentsOfDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else {
            let code = errno
            if code == ENOENT { throw StorageError.notFound(path: path) }
            throw StorageError.io(operation: "opendir", path: path, errno: code)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// A file descriptor that is closed when the object goes away.
final class POSIXFile: StorageFile {
    fileprivate let fd: Int32
    let path: String

    init(descriptor: Int32, path: String) {
        self.fd = descriptor
        self.path = path
    }

    deinit { close(fd) }

    private func fail(_ operation: String) -> StorageError {
        .io(operation: operation, path: path, errno: errno)
    }

    func size() throws -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("fstat") }
        return UInt64(info.st_size)
    }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var total = 0
        while total < buffer.count {
            let n = pread(fd, buffer.baseAddress! + total, buffer.count - total, off_t(offset) + off_t(total))
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("read")
            }
            if n == 0 { break }
            total += n
        }
        return total
    }

    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        var total = 0
        while total < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + total, bytes.count - total, off_t(offset) + off_t(total))
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("write")
            }
            total += n
        }
    }

    func copyInKernel(_ range: Range<UInt64>, to target: any StorageFile) throws -> Bool {
        guard let target = target as? POSIXFile else { return false }
        var input = Int64(range.lowerBound), output = Int64(range.lowerBound)
        while input < Int64(range.upperBound) {
            let copied = hv_copy_file_range(fd, &input, target.fd, &output, Int(Int64(range.upperBound) - input))
            if copied < 0 {
                if errno == EINTR { continue }
                // Not between these files (another file system, an old kernel): before the first
                // byte, the caller copies through memory.
                if input == Int64(range.lowerBound), [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, EBADF].contains(errno) { return false }
                throw StorageError.io(operation: "copy_file_range", path: target.path, errno: errno)
            }
            // The input ended first: the copy through memory meets that end and says so.
            if copied == 0 { return false }
        }
        return true
    }

    func sync() throws {
        #if os(Linux)
        guard fdatasync(fd) == 0 else { throw fail("fdatasync") }
        #else
        try fullSync()
        #endif
    }

    func fullSync() throws {
        #if canImport(Darwin)
        // fsync on Darwin does not flush the drive's cache; F_FULLFSYNC does.
        guard fcntl(fd, F_FULLFSYNC) == 0 else { throw fail("fcntl(F_FULLFSYNC)") }
        #else
        guard fsync(fd) == 0 else { throw fail("fsync") }
        #endif
    }

    func truncate(to size: UInt64) throws {
        guard ftruncate(fd, off_t(size)) == 0 else { throw fail("ftruncate") }
    }

    func tryLockExclusive() throws -> Bool {
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw fail("flock")
    }

    func unlock() throws {
        guard flock(fd, LOCK_UN) == 0 else { throw fail("flock") }
    }
}
