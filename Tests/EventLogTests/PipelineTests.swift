import Testing
@testable import EventLog

/// Logs large enough that frames are opened in background windows on several cores.
@Suite struct PipelineTests {
    private func bigLog(_ t: TestLog) throws -> (events: [[UInt8]], frames: [(offset: Int, size: Int, commit: Bool)]) {
        let log = try t.create(targetFrameSize: 32 << 10)
        var all: [[UInt8]] = []
        for b in 0..<4 {
            let chunk = events("batch\(b)", count: 4000, size: 100)
            try log.append(try batch(chunk))
            all += chunk
        }
        return (all, try frameLayout(log))
    }

    @Test func backgroundWindowsDeliverEveryFrameInOrder() throws {
        let t = TestLog()
        let (all, frames) = try bigLog(t)
        #expect(frames.count > 2 * FramePipeline.windowFrames)
        #expect(try readAll(try t.open(.readOnly)) == all)
        let report = try t.verify()
        #expect(report.isOK && report.frames == frames.count && report.events == UInt64(all.count))
    }

    @Test func damageInALaterWindowStopsDeliveryExactlyThere() throws {
        let t = TestLog()
        let (all, frames) = try bigLog(t)
        let victim = frames[FramePipeline.windowFrames + 3]
        Disk.flipBit(t.logPath, bit: (victim.offset + 500) * 8)
        var delivered: [[UInt8]] = []
        var reader = try t.open(.readOnly).reader()
        #expect(throws: EventLogError.damaged(path: t.logPath, offset: UInt64(victim.offset), defect: .authenticationFailed)) {
            while let frame = try reader.next() { frame.forEachEvent { _, b in delivered.append(Array(b)) } }
        }
        #expect(delivered == Array(all.prefix(delivered.count)))
        #expect(reader.position.offset == UInt64(victim.offset))
        #expect(try t.verify().problems == [EventLogError.damaged(path: t.logPath, offset: UInt64(victim.offset), defect: .authenticationFailed).description])
    }
}
