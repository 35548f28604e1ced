import Foundation
import Storage
import TestSupport
import Testing

/// `InMemoryFileSystem` does what `POSIXFileSystem` does: the same operations on both, in a
/// fresh directory each, give the same results, errors and contents.
@Suite struct FileSystemContractTests {
    /// Each file system with an empty directory of its own.
    static func systems() throws -> [(name: String, fileSystem: any FileSystem, root: String, keep: TemporaryDirectory)] {
        let disk = TemporaryDirectory("contract"), memory = TemporaryDirectory("contract-memory")
        let inMemory = InMemoryFileSystem()
        try inMemory.createDirectory(memory.path)
        return [("POSIX", POSIXFileSystem(), disk.path, disk), ("memory", inMemory, memory.path, memory)]
    }

    static func contents(_ fs: any FileSystem, _ path: String) throws -> [UInt8] {
        let file = try fs.open(path, mode: .readOnly)
        return try file.readBytes(at: 0, count: Int(try file.size()))
    }

    static func write(_ file: any StorageFile, at offset: UInt64, _ text: String) throws {
        try Array(text.utf8).withUnsafeBytes { try file.write(at: offset, $0) }
    }

    /// What each step gave, as text, for comparing the two file systems.
    static func script(_ fs: any FileSystem, _ root: String) -> [String] {
        var log: [String] = []
        func step(_ name: String, _ body: () throws -> String) {
            do { log.append("\(name): \(try body())") } catch let error as StorageError {
                switch error {
                case .io(let operation, _, let code): log.append("\(name): io \(operation) errno \(code)")
                case .alreadyExists: log.append("\(name): already exists")
                case .notFound: log.append("\(name): not found")
                }
            } catch {
                log.append("\(name): \(error)")
            }
        }
        let a = root + "/a", b = root + "/b", sub = root + "/x/y"
        step("open missing") { _ = try fs.open(a, mode: .readOnly); return "opened" }
        step("create") {
            let file = try fs.open(a, mode: .createNew)
            try write(file, at: 0, "hello")
            try write(file, at: 8, "!")  // past the end: a hole of zeros
            try file.sync()
            return "\(try file.size())"
        }
        step("create again") { _ = try fs.open(a, mode: .createNew); return "created" }
        step("read") { String(decoding: try contents(fs, a).map { $0 == 0 ? UInt8(ascii: "_") : $0 }, as: UTF8.self) }
        step("read past the end") {
            let file = try fs.open(a, mode: .readOnly)
            var buffer = [UInt8](repeating: 0, count: 4)
            return "\(try buffer.withUnsafeMutableBytes { try file.read(at: 7, into: $0) }) \(try buffer.withUnsafeMutableBytes { try file.read(at: 100, into: $0) })"
        }
        step("write read-only") { try write(try fs.open(a, mode: .readOnly), at: 0, "x"); return "written" }
        step("truncate") {
            let file = try fs.open(a, mode: .readWrite)
            try file.truncate(to: 2)
            try file.truncate(to: 3)
            return "\(try contents(fs, a))"
        }
        step("link") { try fs.link(a, to: b); return "\(try contents(fs, b))" }
        step("link over") { try fs.link(a, to: b); return "linked" }
        step("write through a name") {
            try write(try fs.open(b, mode: .readWrite), at: 0, "HE")
            return String(decoding: try contents(fs, a).prefix(2), as: UTF8.self)
        }
        step("rename over") {
            let c = root + "/c"
            try write(try fs.open(c, mode: .createNew), at: 0, "new")
            try fs.rename(c, to: a)
            return "\(String(decoding: try contents(fs, a), as: UTF8.self)) \(fs.exists(c))"
        }
        step("rename missing") { try fs.rename(root + "/none", to: a); return "renamed" }
        step("kept open after remove") {
            let file = try fs.open(b, mode: .readOnly)
            try fs.remove(b)
            return "\(fs.exists(b)) \(try file.size())"
        }
        step("remove missing") { try fs.remove(b); return "ok" }
        step("directories") {
            try fs.createDirectory(sub)
            try fs.syncDirectory(sub)
            return try fs.contentsOfDirectory(root).joined(separator: ",")
        }
        step("sync missing directory") { try fs.syncDirectory(root + "/none"); return "synced" }
        step("remove full directory") { try fs.removeDirectory(root + "/x"); return "removed" }
        step("remove empty directory") {
            try fs.removeDirectory(sub)
            try fs.removeDirectory(root + "/x")
            try fs.removeDirectory(root + "/x")
            return "\(fs.exists(root + "/x"))"
        }
        step("create in a missing directory") { _ = try fs.open(root + "/none/f", mode: .createIfMissing); return "created" }
        step("lock") {
            let first = try fs.open(a, mode: .readWrite), second = try fs.open(a, mode: .readWrite)
            let taken = try first.tryLockExclusive(), refused = try second.tryLockExclusive()
            try first.unlock()
            let afterUnlock = try second.tryLockExclusive()
            try second.unlock()
            return "\(taken) \(refused) \(afterUnlock)"
        }
        step("lock released on close") {
            do {
                let holder = try fs.open(a, mode: .readWrite)
                _ = try holder.tryLockExclusive()
            }
            return "\(try fs.open(a, mode: .readWrite).tryLockExclusive())"
        }
        return log
    }

    @Test func inMemoryFilesBehaveAsPOSIXFilesDo() throws {
        let systems = try Self.systems()
        let disk = Self.script(systems[0].fileSystem, systems[0].root), memory = Self.script(systems[1].fileSystem, systems[1].root)
        #expect(disk.count == memory.count)
        for (d, m) in zip(disk, memory) { #expect(d == m) }
        // The script tested what it means to: a sample of its lines, as POSIX gave them.
        #expect(disk.contains("create again: already exists"))
        #expect(disk.contains("read: hello___!"))
        #expect(disk.contains("kept open after remove: false 3"))
        #expect(disk.contains("remove full directory: io rmdir errno 39"))
        #expect(disk.contains("lock: true false true"))
        #expect(disk.contains("lock released on close: true"))
    }
}
