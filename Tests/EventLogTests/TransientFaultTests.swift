import TestSupport
import Testing
@testable import EventLog

/// One write, sync, truncate or rename fails once while the process lives on: the failed append
/// reports it, nothing of it is visible, and the same log object appends correctly afterwards.
@Suite struct TransientFaultTests {
    @Test func aFailedAppendLeavesNothingAndTheNextAppendWorks() throws {
        let acknowledged = events("a", count: 5)
        let failed = events("b", count: 40, size: 30)
        let after = events("c", count: 3)
        var step = 0
        var sawNoFault = false
        while !sawNoFault {
            let t = TestLog("transient\(step)")
            do {
                let log = try t.create()
                try log.append(try batch(acknowledged))
            }
            let disk = FaultInjectingFileSystem(failAt: step, once: true)
            var failedAppendThrew = false
            do {
                let log = try EventLog.open(in: t.directory.path, masterKey: t.key, mode: .readWrite, fileSystem: disk)
                log.targetFrameSize = 256
                do {
                    try log.append(try batch(failed))
                } catch {
                    failedAppendThrew = true
                }
                sawNoFault = !disk.crashed
                // The process goes on: the next append on the same object either works or refuses
                // clearly; it never writes after a half-written frame.
                do { try log.append(try batch(after)) } catch {}
            } catch {
                // The fault hit `open` itself: it reported it.
                #expect(disk.crashed)
            }
            let found = try readAll(try t.open(.readWrite))
            let allowed: [[[UInt8]]] = [acknowledged, acknowledged + failed, acknowledged + after, acknowledged + failed + after]
            #expect(allowed.contains(found), "fault at step \(step) (\(disk.journal.last ?? "")): \(found.count) events")
            if failedAppendThrew { #expect(!found.contains(failed[0]) || found == acknowledged + failed + after || found == acknowledged + failed,
                                           "step \(step): a failed append is partly visible") }
            #expect(try t.verify().isOK, "step \(step)")
            step += 1
        }
        #expect(step > 4)
        print("transient faults: append faulted at each of \(step) steps")
    }
}
