import EventLog
import Foundation

/// A real file system that can lose power: writes not yet made durable by `sync`/`fullSync` of
/// their file, and creations, renames and removals not yet made durable by `syncDirectory`, can
/// be undone by `losePower(keeping:)`, wholly or in part (an unsynced write that survives while
/// an earlier one does not models the disk reordering them). It stops the process at the k-th
/// mutating operation through a `FaultInjectingFileSystem` beneath it, which counts the steps.
public final class PowerLossFileSystem: FileSystem, @unchecked Sendable {
    /// Reads and undoes changes without counting them as steps.
    private let base = POSIXFileSystem()
    /// Performs every operation, counting it and failing from the k-th on.
    private let faults: FaultInjectingFileSystem
    private let lock = NSLock()
    /// The 0-based index of the operation at which the process dies, or nil.
    public var failAt: Int? { faults.failAt }

    /// Undo information of one volatile change, newest last.
    enum Change {
        /// A write or truncate of `path`: its bytes from `offset` and its size before.
        /// `inode` is the file the write went to: a descriptor kept across a rename or removal
        /// writes a file that is no longer at `path`, and undoing it must not touch the new one.
        case data(path: String, inode: UInt64, offset: UInt64, old: [UInt8], oldSize: UInt64)
        /// A file created in `directory`.
        case created(path: String)
        /// `source` renamed over `destination`, whose old contents (if any) are kept.
        case renamed(source: String, destination: String, replaced: [UInt8]?)
        /// A removed file with its contents.
        case removed(path: String, contents: [UInt8])
    }

    private var volatile: [Change] = []
    public private(set) var unsyncedWritesDropped = 0

    public init(failAt: Int? = nil) {
        faults = FaultInjectingFileSystem(failAt: failAt)
    }

    /// Whether the process has died (the k-th operation was reached).
    public var died: Bool { faults.crashed }

    func record(_ change: Change) { lock.withLock { volatile.append(change) } }

    /// A file's data is durable: forget its undo records.
    func synced(_ path: String, inode: UInt64) {
        lock.withLock {
            volatile.removeAll { if case .data(let p, let i, _, _, _) = $0 { return p == path && i == inode } else { return false } }
        }
    }

    /// The inode `path` names now (0 when there is none).
    static func inode(of path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
    }

    /// Directory entries are durable: forget creations, renames and removals inside it.
    func syncedDirectory(_ directory: String) {
        func inside(_ path: String) -> Bool { (path as NSString).deletingLastPathComponent == directory }
        lock.withLock {
            volatile.removeAll { change in
                switch change {
                case .created(let p), .removed(let p, _): inside(p)
                case .renamed(_, let d, _): inside(d)
                case .data: false
                }
            }
        }
    }

    /// Power is lost: every volatile change is undone, newest first, except those `keeping`
    /// says survived (it is asked about each unsynced data write).
    public func losePower(keeping survives: (Int) -> Bool = { _ in false }) throws {
        let changes = lock.withLock { () -> [Change] in
            defer { volatile = [] }
            return volatile
        }
        for (index, change) in changes.enumerated().reversed() {
            switch change {
            case .data(let path, let inode, let offset, let old, let oldSize):
                guard !survives(index), base.exists(path), Self.inode(of: path) == inode else { continue }
                let file = try base.open(path, mode: .readWrite)
                try old.withUnsafeBytes { try file.write(at: offset, $0) }
                try file.truncate(to: oldSize)
                unsyncedWritesDropped += 1
            case .created(let path):
                if base.exists(path) { try base.remove(path) }
            case .renamed(let source, let destination, let replaced):
                if base.exists(destination) { try base.rename(destination, to: source) }
                if let replaced {
                    let file = try base.open(destination, mode: .createNew)
                    try replaced.withUnsafeBytes { try file.write(at: 0, $0) }
                }
            case .removed(let path, let contents):
                let file = try base.open(path, mode: .createIfMissing)
                try contents.withUnsafeBytes { try file.write(at: 0, $0) }
            }
        }
    }

    func contents(_ path: String) -> [UInt8]? {
        guard base.exists(path), let file = try? base.open(path, mode: .readOnly), let size = try? file.size() else { return nil }
        return try? file.readBytes(at: 0, count: Int(size))
    }

    public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        let existed = base.exists(path)
        let file = try faults.open(path, mode: mode)
        if !existed && mode != .readOnly { record(.created(path: path)) }
        return PowerLossFile(base: file, path: path, inode: Self.inode(of: path), fileSystem: self)
    }

    public func rename(_ source: String, to destination: String) throws {
        let replaced = contents(destination)
        try faults.rename(source, to: destination)
        record(.renamed(source: source, destination: destination, replaced: replaced))
    }

    public func link(_ source: String, to destination: String) throws {
        try faults.link(source, to: destination)
        record(.created(path: destination))
    }

    public func remove(_ path: String) throws {
        let old = contents(path) ?? []
        try faults.remove(path)
        record(.removed(path: path, contents: old))
    }

    public func syncDirectory(_ path: String) throws {
        try faults.syncDirectory(path)
        syncedDirectory(path)
    }

    public func createDirectory(_ path: String) throws {
        try faults.createDirectory(path)
    }

    /// Not undone by a power loss: an empty folder left behind holds nothing, and the code that
    /// removes one also removes it when it finds it again.
    public func removeDirectory(_ path: String) throws {
        try faults.removeDirectory(path)
    }

    public func exists(_ path: String) -> Bool { base.exists(path) }

    public func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
}

/// Records undo information around a `FaultInjectingFile`, which counts and fails the steps.
final class PowerLossFile: StorageFile {
    let base: any StorageFile
    let path: String
    /// The file opened, whatever `path` names later.
    let inode: UInt64
    let fileSystem: PowerLossFileSystem

    init(base: any StorageFile, path: String, inode: UInt64, fileSystem: PowerLossFileSystem) {
        self.base = base
        self.path = path
        self.inode = inode
        self.fileSystem = fileSystem
    }

    func size() throws -> UInt64 { try base.size() }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try base.read(at: offset, into: buffer)
    }

    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        let size = try base.size()
        let overlap = offset < size ? try base.readBytes(at: offset, count: Int(min(UInt64(bytes.count), size - offset))) : []
        try base.write(at: offset, bytes)
        fileSystem.record(.data(path: path, inode: inode, offset: offset, old: overlap, oldSize: size))
    }

    func sync() throws {
        try base.sync()
        fileSystem.synced(path, inode: inode)
    }

    func fullSync() throws {
        try base.fullSync()
        fileSystem.synced(path, inode: inode)
    }

    func truncate(to size: UInt64) throws {
        let oldSize = try base.size()
        let tail = size < oldSize ? try base.readBytes(at: size, count: Int(oldSize - size)) : []
        try base.truncate(to: size)
        fileSystem.record(.data(path: path, inode: inode, offset: size, old: tail, oldSize: oldSize))
    }

    func tryLockExclusive() throws -> Bool { try base.tryLockExclusive() }
    func unlock() throws { try base.unlock() }
}
