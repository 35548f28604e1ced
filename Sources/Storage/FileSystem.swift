/// The file operations the log, the head record and the keyslot need, behind a protocol so that
/// tests can inject faults (fail the k-th write, sync or rename) at every step.
public protocol FileSystem: Sendable {
    /// Opens a file. `.createNew` fails with `alreadyExists` when the path exists.
    func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile
    /// Atomically replaces `destination` by `source` (POSIX `rename`).
    func rename(_ source: String, to destination: String) throws
    /// Gives the file at `source` the second name `destination` (POSIX `link`), failing with
    /// `alreadyExists` when `destination` exists: publishes a finished file under its name
    /// without ever replacing another.
    func link(_ source: String, to destination: String) throws
    /// Removes a file; a missing file is not an error.
    func remove(_ path: String) throws
    /// Makes a directory's entries (creations, renames) durable.
    func syncDirectory(_ path: String) throws
    /// Creates a directory (mode 0700) and any missing parents.
    func createDirectory(_ path: String) throws
    /// Removes an empty directory; a missing one is not an error.
    func removeDirectory(_ path: String) throws
    /// Whether anything exists at `path`.
    func exists(_ path: String) -> Bool
    /// Names in a directory, without `.` and `..`.
    func contentsOfDirectory(_ path: String) throws -> [String]
}

/// How to open a file.
public enum FileOpenMode: Sendable {
    case readOnly
    case readWrite
    /// Create a new file with mode 0600; fail if it exists.
    case createNew
    /// Open for reading and writing, creating an empty file (mode 0600) when missing.
    case createIfMissing
}

/// An open file. Not thread-safe: one owner at a time.
public protocol StorageFile: AnyObject {
    /// The file's current size in bytes.
    func size() throws -> UInt64
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at end of file).
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Writes all of `bytes` at `offset`.
    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws
    /// Makes written data durable (`fdatasync`).
    func sync() throws
    /// Makes data and metadata durable (`fsync`), for newly created files.
    func fullSync() throws
    /// Cuts the file to `size` bytes.
    func truncate(to size: UInt64) throws
    /// Takes an exclusive advisory lock without waiting; `false` when another holder has it.
    func tryLockExclusive() throws -> Bool
    /// Releases a lock `tryLockExclusive` took.
    func unlock() throws
    /// Copies `range` of this file to the same offsets of `target` inside the kernel, when both are
    /// files of a system that can (`copy_file_range`): no pages through this process's memory,
    /// as `cp` copies. Returns false when it cannot (another kind of file, another file system that
    /// refuses, the input ending first): the caller copies the range through memory.
    func copyInKernel(_ range: Range<UInt64>, to target: any StorageFile) throws -> Bool
}

extension StorageFile {
    /// Files that are not the operating system's (in memory, or wrapped to inject faults) cannot.
    public func copyInKernel(_ range: Range<UInt64>, to target: any StorageFile) throws -> Bool { false }
}

extension StorageFile {
    /// Reads exactly `count` bytes at `offset`, or fewer only when the file ends first.
    public func readBytes(at offset: UInt64, count: Int) throws -> [UInt8] {
        // Uninitialised storage: the read fills it, and only what was read is kept.
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = try read(at: offset, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

}

extension FileSystem {
    /// Replaces the file at `path` with `contents` so that a crash at any point leaves either the
    /// old or the new contents: write a temporary file, fsync it, rename it over the old one,
    /// fsync the directory.
    public func replaceAtomically(_ path: String, with contents: [UInt8]) throws {
        let temporary = path + ".tmp"
        try remove(temporary)
        let file = try open(temporary, mode: .createNew)
        try contents.withUnsafeBytes { try file.write(at: 0, $0) }
        try file.fullSync()
        try rename(temporary, to: path)
        try syncDirectory(directoryName(of: path))
    }

    /// Reads a small file (at most `limit` bytes of it, so a huge or sparse file cannot force a
    /// huge allocation), or `nil` when it does not exist.
    public func readFileIfPresent(_ path: String, limit: Int) throws -> [UInt8]? {
        guard exists(path) else { return nil }
        return try open(path, mode: .readOnly).readBytes(at: 0, count: limit)
    }
}

/// The directory part of a path (`"."` for a bare name).
public func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
}
