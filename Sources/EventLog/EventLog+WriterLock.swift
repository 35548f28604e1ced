import Foundation
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

/// The writer lock: one writer at a time, and the protocol `vaultctl serve` keeps with the
/// commands that want to write while it serves (it lets go between its commits; docs/companion.md).
extension EventLog {
    /// Takes the writer lock of the log in `directory` for work outside the log that must not
    /// race a writer (finishing a re-key); released when the returned file is released.
    public static func lockForWriting(directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> any StorageFile {
        try acquireLock(LogDirectory(directory), fileSystem)
    }

    static func acquireLock(_ names: LogDirectory, _ fileSystem: any FileSystem) throws -> any StorageFile {
        let lock = try fileSystem.open(names.lock, mode: .createIfMissing)
        // A lock released a moment ago can still be held for a few milliseconds: a process that
        // spawns a child shares its open file descriptions with the child until the child's exec.
        // Retrying briefly tells that apart from another writer, which holds it for its whole run.
        for attempt in 0..<40 {
            if try lock.tryLockExclusive() { return lock }
            if attempt < 39 { usleep(5_000) }
        }
        // A long-running writer that lets others in between its commits (`vaultctl serve`) is
        // waited for, up to `serverWait` seconds; `lockWanted` asks it to leave a gap.
        guard serverIsRunning(names, fileSystem) else { throw EventLogError.locked(path: names.lock) }
        let wanted = names.lockWanted(by: getpid())
        _ = try? fileSystem.open(wanted, mode: .createIfMissing)
        defer { try? fileSystem.remove(wanted) }
        let deadline = Date().addingTimeInterval(serverWait)
        while Date() < deadline {
            if try lock.tryLockExclusive() { return lock }
            usleep(1_000)
        }
        throw EventLogError.locked(path: names.lock)
    }

    /// Seconds a command waits for the writer lock while a server holds it between commits.
    static let serverWait = 10.0

    /// Whether a process holds `serve.lock` (a running `vaultctl serve`).
    static func serverIsRunning(_ names: LogDirectory, _ fileSystem: any FileSystem) -> Bool {
        guard fileSystem.exists(names.serverLock), let file = try? fileSystem.open(names.serverLock, mode: .readWrite) else { return false }
        guard let free = try? file.tryLockExclusive() else { return false }
        if free { try? file.unlock() }
        return !free
    }

    /// Marks the log as served by this process until the returned file is released: commands that
    /// find the writer lock taken then wait for a gap between the server's commits.
    public static func markServed(directory: String, fileSystem: any FileSystem = POSIXFileSystem()) throws -> any StorageFile {
        let names = LogDirectory(directory)
        let file = try fileSystem.open(names.serverLock, mode: .createIfMissing)
        guard try file.tryLockExclusive() else { throw EventLogError.locked(path: names.serverLock) }
        return file
    }

    /// Whether a command waits for the writer lock (the server leaves it a gap). Files left by
    /// waiters that died are removed.
    public var lockIsWanted: Bool {
        guard let names = try? fileSystem.contentsOfDirectory(directory.path) else { return false }
        var wanted = false
        for name in names where name.hasPrefix(LogDirectory.lockWantedPrefix) {
            let pid = Int32(name.dropFirst(LogDirectory.lockWantedPrefix.count)) ?? 0
            if pid > 0, kill(pid, 0) == 0 || errno == EPERM {
                wanted = true
            } else {
                try? fileSystem.remove(directory.path + "/" + name)
            }
        }
        return wanted
    }


    /// Lets other processes write (a long-running writer between its commits, `vaultctl serve`):
    /// releases the writer lock. `retakeWriterLock` takes it back before the next transaction.
    public func releaseWriterLock() throws {
        guard mode == .readWrite, let lockFile, !lockReleased else { return }
        if headWritten == nil { headWritten = try fileSystem.readFileIfPresent(directory.head, limit: HeadRecord.size + 1) }
        try lockFile.unlock()
        lockReleased = true
    }

    /// Takes the writer lock back, trying for up to `timeout` seconds (`EventLogError.locked`
    /// after). Returns whether the log is as this handle left it; when it is not (another process
    /// committed, erased or re-keyed), this handle must not write again: open the log anew.
    public func retakeWriterLock(timeout: Double) throws -> Bool {
        guard let lockFile, lockReleased else { return true }
        let deadline = Date().addingTimeInterval(timeout)
        while try !lockFile.tryLockExclusive() {
            guard Date() < deadline else { throw EventLogError.locked(path: directory.lock) }
            usleep(1_000)
        }
        lockReleased = false
        let head = try fileSystem.readFileIfPresent(directory.head, limit: HeadRecord.size + 1)
        if head != headWritten { failed = true }
        return !failed
    }
}
