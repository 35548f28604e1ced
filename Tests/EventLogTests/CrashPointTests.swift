import TestSupport
import Testing
@testable import EventLog

/// Crash `append` at every file operation it performs: whatever it acknowledged before is
/// there after a restart, the interrupted batch is either wholly there or wholly absent, and
/// the log keeps working. In memory: the subject is the order of the log's steps, not fsync
/// (which `PowerLossTests` takes on, on the real disk).
@Suite struct CrashPointTests {
    @Test func appendCrashedAtEveryStepLosesNothingAcknowledged() throws {
        let acknowledged = events("a", count: 5)
        let interrupted = events("b", count: 40, size: 30)
        var crashPoint = 0
        var sawCompletion = false
        while !sawCompletion {
            let memory = InMemoryFileSystem()
            let t = TestLog("crash\(crashPoint)", fileSystem: memory)
            do {
                let log = try t.create()
                try log.append(try batch(acknowledged))
            }
            let faulty = FaultInjectingFileSystem(failAt: crashPoint, base: memory)
            do {
                let log = try EventLog.open(in: t.directory.path, masterKey: t.key, mode: .readWrite, fileSystem: faulty)
                log.targetFrameSize = 256
                try log.append(try batch(interrupted))
                sawCompletion = !faulty.crashed
            } catch {
                #expect(faulty.crashed, "failed without an injected crash: \(error)")
            }
            // Restart on the file system as the crash left it.
            let reopened = try t.open(.readWrite)
            let found = try readAll(reopened)
            #expect(found == acknowledged || found == acknowledged + interrupted, "crash at step \(crashPoint): \(faulty.journal)")
            if sawCompletion { #expect(found == acknowledged + interrupted) }
            try reopened.append(try batch(events("c", count: 1)))
            #expect(try t.verify().isOK)
            crashPoint += 1
        }
        #expect(crashPoint > 4)
        print("fault injection: append crashed at each of \(crashPoint) steps")
    }
}
