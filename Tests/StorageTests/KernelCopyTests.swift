import Storage
import Testing
import TestSupport

/// The in-kernel copy a backup uses for the log: the range lands at the same offsets and nothing
/// else changes; where it cannot (files in memory, an input that ends first) it says so and has
/// the caller copy through memory.
@Suite struct KernelCopyTests {
    @Test func aRangeLandsAtItsOffsetsAndTheRestStays() throws {
        let dir = TemporaryDirectory()
        let fs = POSIXFileSystem()
        let source = try fs.open(dir.file("source"), mode: .createNew)
        let bytes = (0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        try bytes.withUnsafeBytes { try source.write(at: 0, $0) }
        let target = try fs.open(dir.file("target"), mode: .createNew)
        let before = [UInt8](repeating: 0xEE, count: 1_000)
        try before.withUnsafeBytes { try target.write(at: 0, $0) }
        #expect(try source.copyInKernel(1_000..<(8 << 20) + 17, to: target))
        #expect(try target.size() == UInt64((8 << 20) + 17))
        #expect(try target.readBytes(at: 0, count: (8 << 20) + 17) == before + bytes[1_000..<(8 << 20) + 17])
        // Past the input's end: nothing claimed, the caller copies (and meets the end).
        #expect(try !source.copyInKernel(UInt64(9 << 20)..<UInt64(10 << 20), to: target))
        // Files in memory are not the kernel's.
        let memory = InMemoryFileSystem()
        let inMemory = try memory.open("/m", mode: .createNew)
        #expect(try !source.copyInKernel(0..<10, to: inMemory))
        #expect(try !inMemory.copyInKernel(0..<0, to: target))
    }
}
