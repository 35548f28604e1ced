import EventLog
import Foundation

/// A file system that "crashes" at the k-th mutating operation: that operation and every later
/// one fail, as if the process had died there. What reached the disk before stays. It works on
/// the real file system, or on `base` (an `InMemoryFileSystem` where the disk is not the subject).
///
/// Counting every step (create, write, sync, truncate, rename, unlink, directory sync) lets a test
/// run an operation once per crash point and check what a restart finds.
public final class FaultInjectingFileSystem: FileSystem, @unchecked Sendable {
    private let base: any FileSystem
    private let lock = NSLock()
    private var performed = 0
    /// The 0-based index of the operation that fails, or nil to fail nothing.
    public let failAt: Int?
    /// Whether only that one operation fails (a transient error the process survives) instead of
    /// it and every later one (a crash).
    public let once: Bool
    /// Operations performed (or attempted) so far, with their names, for messages.
    public private(set) var journal: [String] = []

    public init(failAt: Int?, once: Bool = false, base: any FileSystem = POSIXFileSystem()) {
        self.failAt = failAt
        self.once = once
        self.base = base
    }

    /// Whether the injected crash has happened.
    public var crashed: Bool { lock.withLock { failAt.map { performed > $0 } ?? false } }

    func step(_ name: String, _ path: String) throws {
        try lock.withLock {
            journal.append("\(name) \((path as NSString).lastPathComponent)")
            defer { performed += 1 }
            if let failAt, once ? performed == failAt : performed >= failAt {
                throw StorageError.io(operation: "injected \(once ? "fault" : "crash") at \(name)", path: path, errno: EIO)
            }
        }
    }

    public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        if mode != .readOnly { try step("open(\(mode))", path) }
        return FaultInjectingFile(base: try base.open(path, mode: mode), path: path, fileSystem: self)
    }

    public func rename(_ source: String, to destination: String) throws {
        try step("rename", destination)
        try base.rename(source, to: destination)
    }

    public func link(_ source: String, to destination: String) throws {
        try step("link", destination)
        try base.link(source, to: destination)
    }

    public func remove(_ path: String) throws {
        try step("remove", path)
        try base.remove(path)
    }

    public func syncDirectory(_ path: String) throws {
        try step("syncDirectory", path)
        try base.syncDirectory(path)
    }

    public func createDirectory(_ path: String) throws {
        try step("createDirectory", path)
        try base.createDirectory(path)
    }

    public func removeDirectory(_ path: String) throws {
        try step("removeDirectory", path)
        try base.removeDirectory(path)
    }

    public func exists(_ path: String) -> Bool { base.exists(path) }

    public func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
}

final class FaultInjectingFile: StorageFile {
    let base: any StorageFile
    let path: String
    let fileSystem: FaultInjectingFileSystem

    init(base: any StorageFile, path: String, fileSystem: FaultInjectingFileSystem) {
        self.base = base
        self.path = path
        self.fileSystem = fileSystem
    }

    func size() throws -> UInt64 { try base.size() }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try base.read(at: offset, into: buffer)
    }

    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        try fileSystem.step("write", path)
        try base.write(at: offset, bytes)
    }

    func sync() throws {
        try fileSystem.step("sync", path)
        try base.sync()
    }

    func fullSync() throws {
        try fileSystem.step("fullSync", path)
        try base.fullSync()
    }

    func truncate(to size: UInt64) throws {
        try fileSystem.step("truncate", path)
        try base.truncate(to: size)
    }

    func tryLockExclusive() throws -> Bool { try base.tryLockExclusive() }
    func unlock() throws { try base.unlock() }
}
