import Foundation
import TestSupport
import Testing
@testable import EventLog

/// Power lost at every step of `append`, with the writes not yet synced dropped wholly, in part
/// or out of order: what was acknowledged is there, the interrupted batch is all or nothing, and
/// the log opens and keeps working.
@Suite struct PowerLossTests {
    @Test(arguments: [0 as UInt64, 1, 2, 3])
    func appendSurvivesPowerLossAtEveryStep(seed: UInt64) throws {
        let acknowledged = events("a", count: 5)
        let interrupted = events("b", count: 40, size: 30)
        var rng = SeededRandom(seed: seed)
        var step = 0
        var sawCompletion = false
        var dropped = 0
        while !sawCompletion {
            let t = TestLog("power\(step)")
            let disk = PowerLossFileSystem(failAt: step)
            do {
                let log = try t.create()
                try log.append(try batch(acknowledged))
            }
            var appendReturned = false
            do {
                let log = try EventLog.open(in: t.directory.path, masterKey: t.key, mode: .readWrite, fileSystem: disk)
                log.targetFrameSize = 256
                try log.append(try batch(interrupted))
                appendReturned = true
                sawCompletion = !disk.died
            } catch {
                #expect(disk.died, "failed without an injected fault: \(error)")
            }
            // Seed 0 drops every unsynced change; the others keep a random subset (reordering).
            try disk.losePower { _ in seed != 0 && rng.next() % 2 == 0 }
            dropped += disk.unsyncedWritesDropped
            let reopened = try t.open(.readWrite)
            let found = try readAll(reopened)
            #expect(found == acknowledged || found == acknowledged + interrupted, "power lost at step \(step), seed \(seed)")
            if appendReturned { #expect(found == acknowledged + interrupted, "an acknowledged append was lost at step \(step)") }
            try reopened.append(try batch(events("c", count: 1)))
            #expect(try t.verify().isOK)
            step += 1
        }
        #expect(step > 4)
        print("fault injection: append lost power at each of \(step) steps (seed \(seed))")
        if seed == 0 { #expect(dropped > 0) }
    }
}
