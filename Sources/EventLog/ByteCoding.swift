/// Little-endian writing into a growing byte array. Public: the vault's bundle header uses it too.
public struct ByteWriter {
    /// What was written so far.
    public internal(set) var bytes: [UInt8]

    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends an integer, little-endian.
    public mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes as they are.
    public mutating func write(_ raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }
}

/// Little-endian reading from a byte region; every read is bounds-checked and fails with `nil`.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    var remaining: Int { buffer.count - offset }

    mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: value)
    }

    mutating func readBytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        let slice = Array(buffer[offset..<offset + count])
        offset += count
        return slice
    }
}

/// LEB128 unsigned varints: event lengths in a frame payload take one byte for events under 128 bytes.
enum Varint {
    static func encode(_ value: UInt64, into bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Decodes at `offset`, advancing it; `nil` when the bytes end first or the value overflows.
    static func decode(_ buffer: UnsafeRawBufferPointer, offset: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while offset < buffer.count {
            let byte = buffer[offset]
            offset += 1
            if shift == 63 && byte > 1 { return nil }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}
