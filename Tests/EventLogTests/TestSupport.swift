import Foundation
import SecureMemory
@_exported import TestSupport
@testable import EventLog

/// Raw file helpers for damaging a log the way disks, crashes and attackers do, on the real file
/// system or on the one a `TestLog` lives on.
enum Disk {
    static func read(_ path: String, in fileSystem: any FileSystem = POSIXFileSystem()) -> [UInt8] {
        let file = try! fileSystem.open(path, mode: .readOnly)
        return try! file.readBytes(at: 0, count: Int(try! file.size()))
    }

    static func write(_ path: String, _ bytes: [UInt8], in fileSystem: any FileSystem = POSIXFileSystem()) {
        let file = try! fileSystem.open(path, mode: .createIfMissing)
        try! file.truncate(to: 0)
        try! bytes.withUnsafeBytes { try file.write(at: 0, $0) }
    }

    static func flipBit(_ path: String, bit: Int) {
        var bytes = read(path)
        bytes[bit / 8] ^= UInt8(1 << (bit % 8))
        write(path, bytes)
    }

    static func append(_ path: String, _ extra: [UInt8], in fileSystem: any FileSystem = POSIXFileSystem()) {
        write(path, read(path, in: fileSystem) + extra, in: fileSystem)
    }
}

/// A log under test with its key, made small-framed so that batches span several frames.
struct TestLog {
    let directory: TemporaryDirectory
    let key: SecretKey
    let vaultID: [UInt8]
    /// Where the log lives: the real file system, or memory for loops whose subject is not the disk.
    let fileSystem: any FileSystem

    init(_ label: String = #function, fileSystem: any FileSystem = POSIXFileSystem()) {
        directory = TemporaryDirectory(label)
        key = SecretKey.random()
        vaultID = Sodium.randomBytes(16)
        self.fileSystem = fileSystem
        // The same path in memory: messages and paths read as they would on disk.
        if fileSystem is InMemoryFileSystem { try! fileSystem.createDirectory(directory.path) }
    }

    var logPath: String { LogDirectory(directory.path).log }
    var headPath: String { LogDirectory(directory.path).head }

    func create(targetFrameSize: Int = 1 << 20) throws -> EventLog {
        let log = try EventLog.create(in: directory.path, vaultID: vaultID, masterKey: key, fileSystem: fileSystem)
        log.targetFrameSize = targetFrameSize
        return log
    }

    func open(_ mode: EventLog.AccessMode = .readWrite, targetFrameSize: Int = 1 << 20) throws -> EventLog {
        let log = try EventLog.open(in: directory.path, masterKey: key, mode: mode, fileSystem: fileSystem)
        log.targetFrameSize = targetFrameSize
        return log
    }

    /// A file's bytes, from wherever the log lives.
    func read(_ path: String) -> [UInt8] { Disk.read(path, in: fileSystem) }

    /// Replaces a file's bytes, wherever the log lives (as a crash or an attacker leaves them).
    func write(_ path: String, _ bytes: [UInt8]) { Disk.write(path, bytes, in: fileSystem) }

    /// Adds bytes at a file's end, wherever the log lives.
    func append(_ path: String, _ extra: [UInt8]) { Disk.append(path, extra, in: fileSystem) }

    func verify() throws -> VerificationReport {
        try EventLog.verify(in: directory.path, masterKey: key, fileSystem: fileSystem)
    }

    /// Every event of the log, read frame by frame from the start by a new read-only handle:
    /// where damage before the head shows (opening checks only the head and what follows it).
    func readAll() throws -> [[UInt8]] {
        var all: [[UInt8]] = []
        var reader = try open(.readOnly).reader()
        while let frame = try reader.next() { frame.forEachEvent { _, bytes in all.append(Array(bytes)) } }
        return all
    }
}

/// Distinct, recognisable events: `label-index` padded to `size` bytes.
func events(_ label: String, count: Int, size: Int = 24) -> [[UInt8]] {
    (0..<count).map { i in
        var bytes = Array("\(label)-\(i)".utf8)
        while bytes.count < size { bytes.append(UInt8(ascii: ".")) }
        return bytes
    }
}

func batch(_ events: [[UInt8]]) throws -> EventBatch {
    var batch = EventBatch()
    for event in events { try batch.append(event) }
    return batch
}

/// Every committed event, in order.
func readAll(_ log: EventLog) throws -> [[UInt8]] {
    var result: [[UInt8]] = []
    var reader = try log.reader()
    while let frame = try reader.next() {
        frame.forEachEvent { _, bytes in result.append(Array(bytes)) }
    }
    return result
}

/// Offsets and sizes of every committed frame.
func frameLayout(_ log: EventLog) throws -> [(offset: Int, size: Int, commit: Bool)] {
    var result: [(Int, Int, Bool)] = []
    var reader = try log.reader()
    while let frame = try reader.next() {
        result.append((Int(frame.offset), Int(frame.encodedSize), frame.isCommit))
    }
    return result
}

/// The `damaged` offset of an error, or nil when it is another error.
func damagedOffset(_ error: any Error) -> UInt64? {
    if case EventLogError.damaged(_, let offset, _) = error { return offset }
    return nil
}
