import BinaryCoding
import Testing

/// The little-endian writer and the bounds-checked reader: the bytes written, read back, and what
/// a short buffer gives.
@Suite struct ByteCodingTests {
    @Test func integersAreWrittenLittleEndianAndReadBack() {
        var writer = ByteWriter(capacity: 16)
        writer.write(UInt8(0xAB))
        writer.write(UInt16(0x0102))
        writer.write(Int32(-2))
        writer.write(UInt64(0x0807_0605_0403_0201))
        writer.write([0xEE, 0xFF])
        #expect(writer.bytes == [0xAB, 0x02, 0x01, 0xFE, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8, 0xEE, 0xFF])
        writer.bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            #expect(reader.read(UInt8.self) == 0xAB)
            #expect(reader.read(UInt16.self) == 0x0102)
            #expect(reader.read(Int32.self) == -2)
            #expect(reader.read(UInt64.self) == 0x0807_0605_0403_0201)
            #expect(reader.remaining == 2)
            // Too few bytes for a wider integer: nil, and nothing consumed.
            #expect(reader.read(UInt32.self) == nil)
            #expect(reader.offset == 15)
            #expect(reader.readBytes(3) == nil)
            #expect(reader.readBytes(2) == [0xEE, 0xFF])
            #expect(reader.remaining == 0 && reader.read(UInt8.self) == nil)
        }
    }

    @Test func skipStopsAtTheEndAndIgnoresNegativeCounts() {
        [UInt8](1...10).withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            reader.skip(-5)
            #expect(reader.offset == 0)
            reader.skip(4)
            #expect(reader.read(UInt8.self) == 5)
            reader.skip(100)
            #expect(reader.offset == 10 && reader.remaining == 0)
            #expect(reader.readBytes(-1) == nil)
        }
    }

    @Test func anIntegerFromLittleEndianBytesNeedsExactlyItsWidth() {
        #expect(UInt32(littleEndianBytes: [0x78, 0x56, 0x34, 0x12]) == 0x1234_5678)
        #expect(Int16(littleEndianBytes: [0xFF, 0xFF]) == -1)
        #expect(UInt32(littleEndianBytes: [1, 2, 3]) == nil)
        #expect(UInt32(littleEndianBytes: [1, 2, 3, 4, 5]) == nil)
    }

    /// What a damaged or hostile length gives: nil, never a trap or a wrapped value.
    @Test func aVarintThatEndsEarlyOrOverflowsIsRefused() {
        func decode(_ bytes: [UInt8]) -> (UInt64?, Int) {
            var offset = 0
            let value = bytes.withUnsafeBytes { Varint.decode($0, offset: &offset) }
            return (value, offset)
        }
        #expect(decode([]).0 == nil)
        #expect(decode([0x80]).0 == nil)
        #expect(decode([0xFF, 0xFF]).0 == nil)
        // UInt64.max is nine bytes of 0xFF and a last byte of 1; a last byte of 2 would be 2^64.
        let max: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x01]
        #expect(decode(max) == (UInt64.max, 10))
        #expect(decode(Array(repeating: 0xFF, count: 9) + [0x02]).0 == nil)
        // Eleven bytes: past 64 bits even with zero payload.
        #expect(decode(Array(repeating: 0x80, count: 10) + [0x00]).0 == nil)
        // A non-minimal encoding of 1 still reads as 1 (the encoder never writes one).
        #expect(decode([0x81, 0x00]) == (1, 2))
    }
}
