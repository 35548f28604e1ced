import BinaryCoding
import Testing

/// LEB128 varints: the bytes of boundary values, appended after what the array held, and read
/// back.
@Suite struct VarintTests {
    /// The encoding written out the plain way: seven bits a byte, low first, a high bit on every
    /// byte but the last.
    static func reference(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        var v = value
        repeat {
            let low = UInt8(v & 0x7F)
            v >>= 7
            out.append(v == 0 ? low : low | 0x80)
        } while v != 0
        return out
    }

    @Test func boundaryValuesEncodeAsTheReferenceAndDecodeBack() {
        var values: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 300, .max, .max - 1, 1 << 63]
        for shift in stride(from: 7, through: 63, by: 7) {
            values += [(1 << UInt64(shift)) - 1, 1 << UInt64(shift), (1 << UInt64(shift)) + 1]
        }
        for value in values {
            var bytes: [UInt8] = [0xAA, 0xBB]
            Varint.encode(value, into: &bytes)
            #expect(bytes == [0xAA, 0xBB] + Self.reference(value), "value \(value)")
            var offset = 2
            let decoded = bytes.withUnsafeBytes { Varint.decode($0, offset: &offset) }
            #expect(decoded == value && offset == bytes.count, "value \(value)")
        }
        #expect(Self.reference(.max).count == 10)
        #expect(Self.reference(300) == [0xAC, 0x02])
    }
}

/// Signed integers as varints: the mapping the event encoding and the read models' intervals
/// have written since their first format.
@Suite struct ZigZagTests {
    @Test func smallMagnitudesComeFirstAndEveryValueComesBack() {
        #expect([0, -1, 1, -2, 2, -64, 63].map(ZigZag.encode) == [0, 1, 2, 3, 4, 127, 126])
        #expect(ZigZag.encode(.max) == .max - 1 && ZigZag.encode(.min) == .max)
        for value: Int64 in [0, 1, -1, 63, -64, 64, -65, 1 << 40, -(1 << 40), .max, .min] {
            #expect(ZigZag.decode(ZigZag.encode(value)) == value, "\(value)")
        }
    }
}
