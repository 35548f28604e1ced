import BinaryCoding
import Testing

@Suite struct ZeroBytesTests {
    /// What was there stays, and exactly `count` zeros follow, across the 64 KiB block's edges.
    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 200_000])
    func appendZerosAddsExactlyThatManyZeros(count: Int) {
        var bytes: [UInt8] = [1, 2, 3]
        bytes.appendZeros(count)
        #expect(bytes.count == 3 + count)
        #expect(bytes.prefix(3) == [1, 2, 3])
        #expect(bytes.dropFirst(3).allSatisfy { $0 == 0 })
        bytes.append(9)
        #expect(bytes.last == 9 && bytes.count == 4 + count)
    }
}
