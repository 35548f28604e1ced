import EventLog
#if canImport(Glibc)
import Glibc
#endif

/// A backup's committed state seen as a vault directory, read-only: `events.log` is the backup's
/// log up to its head's offset (an unfinished run's bytes past it are not seen), the small files
/// are the current state's. `backup verify` runs the vault's own verification through it, and
/// `restore` copies from it.
struct BackupView: FileSystem {
    /// The directory the view pretends to be; nothing exists there on disk.
    static let root = "/healthvault-backup"
    let files: [String: String]
    let logLength: UInt64
    let base: any FileSystem

    init(_ destination: BackupDestination, state: BackupDestination.State, logLength: UInt64) {
        var files: [String: String] = ["events.log": destination.file(state.logName)]
        for name in BackupDestination.stateFiles where destination.fileSystem.exists(destination.stateFile(state, name)) {
            files[name] = destination.stateFile(state, name)
        }
        self.files = files
        self.logLength = logLength
        base = destination.fileSystem
    }

    private func backing(_ path: String) -> (name: String, path: String)? {
        guard path.hasPrefix(Self.root + "/") else { return nil }
        let name = String(path.dropFirst(Self.root.count + 1))
        return files[name].map { (name, $0) }
    }

    private func readOnly(_ path: String) -> StorageError { .io(operation: "write", path: path, errno: EROFS) }

    func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
        guard let (name, real) = backing(path) else { throw StorageError.io(operation: "open", path: path, errno: ENOENT) }
        guard mode == .readOnly else { throw readOnly(path) }
        let file = try base.open(real, mode: .readOnly)
        return name == "events.log" ? CappedFile(file: file, length: logLength) : file
    }

    func rename(_ source: String, to destination: String) throws { throw readOnly(destination) }
    func link(_ source: String, to destination: String) throws { throw readOnly(destination) }
    func remove(_ path: String) throws { if exists(path) { throw readOnly(path) } }
    func syncDirectory(_ path: String) throws {}
    func createDirectory(_ path: String) throws { throw readOnly(path) }
    func removeDirectory(_ path: String) throws { if exists(path) { throw readOnly(path) } }
    func exists(_ path: String) -> Bool { path == Self.root || backing(path) != nil }
    func contentsOfDirectory(_ path: String) throws -> [String] { path == Self.root ? files.keys.sorted() : [] }

    /// A file cut short at `length` for its readers.
    final class CappedFile: StorageFile {
        let file: any StorageFile
        let length: UInt64

        init(file: any StorageFile, length: UInt64) {
            self.file = file
            self.length = length
        }

        func size() throws -> UInt64 { min(try file.size(), length) }
        func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard offset < length else { return 0 }
            let count = Int(min(UInt64(buffer.count), length - offset))
            return try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]))
        }
        func write(at offset: UInt64, _ bytes: UnsafeRawBufferPointer) throws { throw StorageError.io(operation: "write", path: "events.log", errno: EROFS) }
        func sync() throws {}
        func fullSync() throws {}
        func truncate(to size: UInt64) throws { throw StorageError.io(operation: "truncate", path: "events.log", errno: EROFS) }
        func tryLockExclusive() throws -> Bool { true }
        func unlock() throws {}
    }
}
