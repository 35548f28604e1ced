import Foundation

/// A file system in memory, with the POSIX semantics the vault relies on: `.createNew` and
/// `link` refuse an existing name, `rename` replaces its destination, a file keeps its contents
/// under every name it has and through an open handle after its names are gone, an exclusive
/// lock is held by one open file at a time and released when that file is closed. Syncs cost
/// nothing: for tests whose subject is not the disk (crash points, torn tails, damage), which
/// then run without a real fsync per step. `StorageTests` runs the same operations against
/// `POSIXFileSystem` and compares.
public final class InMemoryFileSystem: FileSystem, @unchecked Sendable {
    /// A file's contents and lock, shared by its names and open handles.
    final class Node {
        var bytes: [UInt8] = []
        /// The open file holding the exclusive lock.
        var lockHolder: ObjectIdentifier?
    }

    private let lock = NSLock()
    private var files: [String: Node] = [:]
    private var directories: Set<String> = ["/"]

    public init() {}

    private func missing(_ operation: String, _ path: String) -> StorageError {
        .io(operation: operation, path: path, errno: ENOENT)
    }

    public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        try lock.withLock {
            if let node = files[path] {
                if mode == .createNew { throw StorageError.alreadyExists(path: path) }
                return InMemoryFile(node: node, path: path, writable: mode != .readOnly, fileSystem: self)
            }
            if directories.contains(path) {
                throw StorageError.io(operation: "open", path: path, errno: EISDIR)
            }
            guard mode == .createNew || mode == .createIfMissing else { throw StorageError.notFound(path: path) }
            guard directories.contains(directoryName(of: path)) else { throw StorageError.notFound(path: path) }
            let node = Node()
            files[path] = node
            return InMemoryFile(node: node, path: path, writable: true, fileSystem: self)
        }
    }

    public func rename(_ source: String, to destination: String) throws {
        try lock.withLock {
            guard let node = files[source] else { throw missing("rename", source) }
            guard directories.contains(directoryName(of: destination)) else { throw missing("rename", source) }
            files[source] = nil
            files[destination] = node
        }
    }

    public func link(_ source: String, to destination: String) throws {
        try lock.withLock {
            if files[destination] != nil || directories.contains(destination) { throw StorageError.alreadyExists(path: destination) }
            guard let node = files[source], directories.contains(directoryName(of: destination)) else { throw missing("link", destination) }
            files[destination] = node
        }
    }

    public func remove(_ path: String) throws {
        lock.withLock { files[path] = nil }
    }

    public func syncDirectory(_ path: String) throws {
        try lock.withLock {
            guard directories.contains(path) else { throw missing("open directory", path) }
        }
    }

    public func createDirectory(_ path: String) throws {
        try lock.withLock {
            var path = path
            var made: [String] = []
            while !directories.contains(path) {
                if files[path] != nil { throw StorageError.io(operation: "mkdir", path: path, errno: EEXIST) }
                made.append(path)
                let parent = directoryName(of: path)
                if parent == path || parent == "." { break }
                path = parent
            }
            directories.formUnion(made)
        }
    }

    public func removeDirectory(_ path: String) throws {
        try lock.withLock {
            guard directories.contains(path) else { return }
            let inside = files.keys.contains { directoryName(of: $0) == path } || directories.contains { $0 != path && directoryName(of: $0) == path }
            if inside { throw StorageError.io(operation: "rmdir", path: path, errno: ENOTEMPTY) }
            directories.remove(path)
        }
    }

    public func exists(_ path: String) -> Bool {
        lock.withLock { files[path] != nil || directories.contains(path) }
    }

    public func contentsOfDirectory(_ path: String) throws -> [String] {
        try lock.withLock {
            guard directories.contains(path) else { throw missing("opendir", path) }
            let names = files.keys.filter { directoryName(of: $0) == path } + directories.filter { $0 != path && directoryName(of: $0) == path }
            return names.map { String($0.dropFirst(path.hasSuffix("/") ? path.count : path.count + 1)) }.sorted()
        }
    }

    /// Runs `body` on `node` under the file system's lock (handles of one file may live on
    /// several threads, as descriptors do).
    func withNode<T>(_ node: Node, _ body: (Node) throws -> T) rethrows -> T {
        try lock.withLock { try body(node) }
    }
}

/// An open file of an `InMemoryFileSystem`.
final class InMemoryFile: StorageFile {
    private let node: InMemoryFileSystem.Node
    private let path: String
    private let writable: Bool
    private let fileSystem: InMemoryFileSystem

    init(node: InMemoryFileSystem.Node, path: String, writable: Bool, fileSystem: InMemoryFileSystem) {
        self.node = node
        self.path = path
        self.writable = writable
        self.fileSystem = fileSystem
    }

    /// Closing a descriptor releases its lock.
    deinit {
        let me = ObjectIdentifier(self)
        fileSystem.withNode(node) { if $0.lockHolder == me { $0.lockHolder = nil } }
    }

    func size() throws -> UInt64 { fileSystem.withNode(node) { UInt64($0.bytes.count) } }

    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        fileSystem.withNode(node) { node in
            guard offset < UInt64(node.bytes.count) else { return 0 }
            let start = Int(offset), count = min(buffer.count, node.bytes.count - start)
            node.bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
            return count
        }
    }

    func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws {
        guard writable else { throw StorageError.io(operation: "write", path: path, errno: EBADF) }
        fileSystem.withNode(node) { node in
            let start = Int(offset), end = start + bytes.count
            if node.bytes.count < end { node.bytes += [UInt8](repeating: 0, count: end - node.bytes.count) }
            node.bytes.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[start..<end]).copyMemory(from: bytes) }
        }
    }

    func sync() throws {}

    func fullSync() throws {}

    func truncate(to size: UInt64) throws {
        guard writable else { throw StorageError.io(operation: "ftruncate", path: path, errno: EINVAL) }
        fileSystem.withNode(node) { node in
            let size = Int(size)
            if size < node.bytes.count { node.bytes.removeLast(node.bytes.count - size) } else {
                node.bytes += [UInt8](repeating: 0, count: size - node.bytes.count)
            }
        }
    }

    func tryLockExclusive() throws -> Bool {
        let me = ObjectIdentifier(self)
        return fileSystem.withNode(node) { node in
            if let holder = node.lockHolder, holder != me { return false }
            node.lockHolder = me
            return true
        }
    }

    func unlock() throws {
        let me = ObjectIdentifier(self)
        fileSystem.withNode(node) { if $0.lockHolder == me { $0.lockHolder = nil } }
    }
}
