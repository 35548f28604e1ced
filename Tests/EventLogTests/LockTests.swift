import Foundation
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
        holder.arguments = [LogDirectory(t.directory.path).lock, "-c", "read line"]
        let input = Pipe()
        holder.standardInput = input
        try holder.run()
        // Closing its stdin ends `read`, and with it the holder.
        defer { try? input.fileHandleForWriting.close(); holder.waitUntilExit() }
        var locked = false
        for _ in 0..<100 where !locked {
            do { _ = try t.open(.readWrite); usleep(20_000) } catch EventLogError.locked { locked = true }
        }
        #expect(locked)
        #expect(try t.open(.readOnly).committed.sequence == 0)
    }
}
