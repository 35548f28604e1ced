import Foundation
import HealthModel

/// The binary encoding of `VaultEvent`s inside log frames (docs/event-encoding.md).
///
/// Every event starts with the encoding version (1 byte) and the kind (varint). Strings that
/// repeat (types, units, metadata keys) and sources are interned: a `defineString` or
/// `defineSource` event gives the next id once, and later events carry the id. Ids are dense and
/// assigned in log order, so a reader rebuilds the tables by reading the log from the start.
enum EventCoding {
    static let version: UInt8 = 1

    enum Kind: UInt64 {
        case vaultCreated = 1
        case passphraseChanged = 2
        case defineString = 3
        case defineSource = 4
        case sample = 5
        case workout = 6
        case route = 7
        case activitySummary = 8
        case characteristics = 9
        case importRecorded = 10
        case correlation = 11
        case genericRecord = 12
        case goalSet = 13
        case sourceOrderSet = 14
        case recipientAdded = 15
        case consentGranted = 16
        case consentRevoked = 17
        case exportPerformed = 18
        case identityRecorded = 19
        case masterKeyRotated = 20
    }

    /// Seconds of 2001-01-01T00:00:00Z (Apple's reference date): timestamps are stored relative to it.
    static let epoch: Int64 = 978_307_200
}

/// Appends the primitives of the encoding.
struct EventWriter {
    var bytes: [UInt8] = []

    init(kind: EventCoding.Kind) {
        bytes.reserveCapacity(64)
        bytes.append(EventCoding.version)
        varint(kind.rawValue)
    }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func varint(_ value: Int) { varint(UInt64(value)) }
    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func string(_ s: String) {
        let utf8 = s.utf8
        varint(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    /// Milliseconds since 1970, for audit timestamps.
    mutating func date(_ date: Date) { signed(Int64((date.timeIntervalSince1970 * 1000).rounded())) }

    /// Seconds since 2001 and the UTC offset (in quarter hours when whole, else minutes).
    mutating func timestamp(_ t: HealthTimestamp) {
        signed(t.seconds - EventCoding.epoch)
        utcOffset(t.utcOffset)
    }

    /// Quarter hours when whole (one byte for every offset in use), else minutes; low bit says which.
    mutating func utcOffset(_ o: Int32) {
        let (value, minutes): (Int64, UInt64) = o % 900 == 0 ? (Int64(o / 900), 0) : (Int64(o / 60), 1)
        varint(zigzag(value) << 1 | minutes)
    }

    private func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    /// Exact decimals as zigzag(mantissa) << 5 | scale; others as 31 followed by 8 bytes.
    mutating func decimal(_ d: DecimalValue) {
        if d.exact, d.scale < 31, d.mantissa > Int64.min >> 6, d.mantissa < Int64.max >> 6 {
            let zig = UInt64(bitPattern: (d.mantissa << 1) ^ (d.mantissa >> 63))
            varint(zig << 5 | UInt64(d.scale))
        } else {
            varint(31)
            withUnsafeBytes(of: d.double.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        }
    }
}

/// Reads the primitives; every read is bounds-checked.
struct EventReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    let index: UInt64

    init(_ bytes: UnsafeRawBufferPointer, index: UInt64) {
        self.bytes = bytes
        self.index = index
    }

    var isAtEnd: Bool { offset == bytes.count }

    func fail(_ reason: String) -> VaultError { .undecodableEvent(index: index, reason: reason) }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw fail("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift > 63 || (shift == 63 && b > 1) { throw fail("varint overflow") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func count(limit: Int = 1 << 24) throws -> Int {
        let n = try varint()
        guard n <= UInt64(limit), n <= UInt64(bytes.count - offset) * 64 + 64 else { throw fail("count out of range") }
        return Int(n)
    }

    mutating func signed() throws -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    mutating func string() throws -> String {
        try inlineString(length: try varint())
    }

    /// `length` bytes of UTF-8 at the current offset.
    mutating func inlineString(length n: UInt64) throws -> String {
        guard n <= UInt64(bytes.count - offset) else { throw fail("truncated string") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(n)])
        offset += Int(n)
        guard let s = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8") }
        return s
    }

    mutating func date() throws -> Date {
        Date(timeIntervalSince1970: Double(try signed()) / 1000)
    }

    mutating func timestamp() throws -> HealthTimestamp {
        let (seconds, overflow) = try signed().addingReportingOverflow(EventCoding.epoch)
        guard !overflow else { throw fail("timestamp out of range") }
        return HealthTimestamp(seconds: seconds, utcOffset: try utcOffset())
    }

    /// `a + b`, or a decoding error instead of a trap when corrupted bytes overflow.
    func sum(_ a: Int64, _ b: Int64) throws -> Int64 {
        let (s, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw fail("value out of range") }
        return s
    }

    mutating func utcOffset() throws -> Int32 {
        let code = try varint()
        let zig = code >> 1
        let value = Int64(bitPattern: (zig >> 1) ^ (0 &- (zig & 1)))
        guard abs(value) <= 18 * 60 else { throw fail("UTC offset out of range") }
        let seconds = code & 1 == 0 ? value * 900 : value * 60
        guard abs(seconds) <= 18 * 3600 else { throw fail("UTC offset out of range") }
        return Int32(seconds)
    }

    mutating func decimal() throws -> DecimalValue {
        let code = try varint()
        let scale = code & 31
        if scale == 31 {
            guard bytes.count - offset >= 8 else { throw fail("truncated number") }
            let bits = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
            offset += 8
            return DecimalValue(double: Double(bitPattern: bits))
        }
        guard scale <= 18 else { throw fail("decimal scale out of range") }
        let zig = code >> 5
        return DecimalValue(mantissa: Int64(bitPattern: (zig >> 1) ^ (0 &- (zig & 1))), scale: UInt8(scale))
    }
}
