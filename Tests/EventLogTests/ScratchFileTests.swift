import Foundation
import Testing
@testable import EventLog

@Suite struct ScratchFileTests {
    @Test func recordsComeBackInOrderAndNothingIsLeftOnDisk() throws {
        let dir = TemporaryDirectory()
        let scratch = try ScratchFile(in: dir.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        var expected: [[UInt8]] = []
        for i in 0..<5000 {
            let record = Array("record-\(i)".utf8) + [UInt8](repeating: UInt8(i % 251), count: i % 700)
            expected.append(record)
            try scratch.append(record)
        }
        let big = [UInt8](repeating: 7, count: ScratchFile.blockSize + 10)
        try scratch.append(big)
        expected.append(big)
        var seen: [[UInt8]] = []
        try scratch.forEachRecord { seen.append(Array($0)) }
        #expect(seen == expected)
        #expect(scratch.count == expected.count)
    }

    @Test func noPlaintextReachesTheDisk() throws {
        let dir = TemporaryDirectory()
        let scratch = try ScratchFile(in: dir.path)
        let marker = Array("heart-rate-72-bpm".utf8)
        for _ in 0..<100 { try scratch.append(marker) }
        try scratch.finishWriting()
        // The file is unlinked; read what it holds through the process's descriptor table.
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        var found = false
        for fd in fds {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd),
                  target.contains(".scratch-"), let handle = FileHandle(forReadingAtPath: "/proc/self/fd/" + fd),
                  let data = try handle.readToEnd() else { continue }
            found = true
            #expect(data.count > 1600)
            #expect(data.range(of: Data(marker)) == nil)
        }
        #expect(found)
    }
}
