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

/// Where a codec writes its bytes one at a time: a byte array, or an encoder's own buffer
/// (`FieldBuffer` of the event encoding).
public protocol ByteSink {
    mutating func append(_ byte: UInt8)
}

extension Array: ByteSink where Element == UInt8 {}

/// LEB128 unsigned varints, the one codec for them: event lengths in a frame payload, scratch
/// records, every integer of the event encoding and of the read models' intervals (a value
/// under 128 takes one byte).
public enum Varint {
    /// Appends `value`. Always inlined: an import writes several for every sample, and the call
    /// the optimizer left in an event's length alone was measured (docs/benchmarks.md, "FIT files").
    @inlinable @inline(__always)
    public static func encode<Sink: ByteSink>(_ value: UInt64, into sink: inout Sink) {
        var v = value
        while v >= 0x80 {
            sink.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        sink.append(UInt8(v))
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

/// Signed integers as unsigned ones that small magnitudes keep short (0, −1, 1, −2 → 0, 1, 2, 3),
/// for varints: the one codec for them.
public enum ZigZag {
    @inlinable
    public static func encode(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    @inlinable
    public static func decode(_ code: UInt64) -> Int64 { Int64(bitPattern: (code >> 1) ^ (0 &- (code & 1))) }
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
