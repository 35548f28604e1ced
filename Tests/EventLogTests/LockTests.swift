import Foundation
import TestSupport
import Testing
@testable import EventLog

@Suite(.timeLimit(.minutes(10))) struct LockTests {
    @Test func aSecondWriterGetsAClearErrorAndReadersAreNotBlocked() throws {
        let t = TestLog()
        let writer = try t.create()
        try writer.append(try batch(events("a", count: 2)))
        #expect(throws: EventLogError.locked(path: LogDirectory(t.directory.path).lock)) { _ = try t.open(.readWrite) }
        let reader = try t.open(.readOnly)
        #expect(try readAll(reader) == events("a", count: 2))
        try writer.append(try batch(events("b", count: 1)))
        // A reader made before the append stops at the commit it saw; a new one sees the append.
        #expect(try readAll(reader) == events("a", count: 2))
        #expect(try readAll(try t.open(.readOnly)) == events("a", count: 2) + events("b", count: 1))
    }

    @Test func theLockIsReleasedWhenTheWriterGoesAway() throws {
        let t = TestLog()
        do {
            let first = try t.create()
            // While it lives, a second writer is refused with the lock's own error...
            #expect(throws: EventLogError.locked(path: LogDirectory(t.directory.path).lock)) { _ = try t.open(.readWrite) }
            withExtendedLifetime(first) {}
        }
        // ...and once it is gone, the next writer takes the lock and commits.
        let again = try t.open(.readWrite)
        let position = try again.append(try batch(events("a", count: 1)))
        #expect(position.sequence == 1 && position.eventCount == 1)
    }

    @Test func aWriterInAnotherProcessHoldsTheLock() throws {
        let t = TestLog()
        _ = try t.create()
        // flock(1) from util-linux holds the same kind of lock from another process.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        holder.arguments = [LogDirectory(t.directory.path).lock, "-c", "echo held; read line"]
        let input = Pipe(), output = Pipe()
        holder.standardInput = input
        holder.standardOutput = output
        try holder.run()
        // Closing its stdin ends `read`, and with it the holder.
        defer { try? input.fileHandleForWriting.close(); Deadline.wait(for: holder, seconds: 60) }
        // It says when it holds the lock: no window of time to guess.
        var said = ""
        let deadline = Date().addingTimeInterval(120)
        while !said.contains("held"), Date() < deadline {
            guard let chunk = Deadline.read(output.fileHandleForReading, seconds: 1) else { continue }
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        #expect(said == "held\n")
        #expect(throws: EventLogError.locked(path: LogDirectory(t.directory.path).lock)) { _ = try t.open(.readWrite) }
        #expect(try t.open(.readOnly).committed.sequence == 0)
    }
}
