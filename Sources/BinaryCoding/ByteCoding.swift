/// Little-endian writing into a growing byte array: the log's headers, the keyslot, bundle headers.
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
public struct ByteReader {
    public let buffer: UnsafeRawBufferPointer
    public private(set) var offset = 0

    public init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    public var remaining: Int { buffer.count - offset }

    /// The next integer, little-endian, or nil when too few bytes remain.
    public mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: value)
    }

    /// Moves past `count` bytes (at most what remains).
    public mutating func skip(_ count: Int) {
        offset += Swift.min(Swift.max(count, 0), remaining)
    }

    /// The next `count` bytes, or nil when fewer remain.
    public mutating func readBytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        let slice = Array(buffer[offset..<offset + count])
        offset += count
        return slice
    }
}

/// LEB128 unsigned varints, the one codec for them: event lengths in a frame payload, scratch
/// records, and every integer of the event encoding (a value under 128 takes one byte).
public enum Varint {
    /// Appends `value`.
    @inlinable
    public static func encode(_ value: UInt64, into bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Decodes at `offset`, advancing it; `nil` when the bytes end first or the value overflows.
    @inlinable
    public static func decode(_ buffer: UnsafeRawBufferPointer, offset: inout Int) -> UInt64? {
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

extension FixedWidthInteger {
    /// The integer whose little-endian bytes are `bytes`; nil unless there are exactly enough.
    @inlinable
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == MemoryLayout<Self>.size else { return nil }
        var value = Self.zero
        for (i, byte) in bytes.enumerated() { value |= Self(truncatingIfNeeded: byte) << (8 * i) }
        self = value
    }
}
