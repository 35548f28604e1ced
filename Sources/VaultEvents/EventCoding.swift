import BinaryCoding
import Foundation
import HealthModel

/// The binary encoding of `VaultEvent`s inside log frames (docs/event-encoding.md).
///
/// Every event starts with the encoding version (1 byte) and the kind (varint). Strings that
/// repeat (types, units, metadata keys) and sources are interned: a `defineString` or
/// `defineSource` event gives the next id once, and later events carry the id. Ids are dense and
/// assigned in log order, so a reader rebuilds the tables by reading the log from the start.
package enum EventCoding {
    package static let version: UInt8 = 1

    package enum Kind: UInt64 {
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
        case erased = 21
        /// A correlation whose whole event is its identity (with its creation date).
        case correlationWhole = 22
        /// An ECG recording.
        case electrocardiogram = 23
        /// A kept element with a resource of its own (a clinical record's FHIR JSON), which is not
        /// part of its identity.
        case genericRecordWithResource = 24
        /// A sample replaced by a re-posted value: the replaced event's index, then the replaced
        /// sample's fields as a kind-5 event has them.
        case sampleSuperseded = 25
        /// A companion app paired: date, name, token hash.
        case companionPaired = 26
        /// A companion app's token revoked: date, name.
        case companionRevoked = 27
        /// A tracker defined: date, name, levels, success levels, day start, HealthKit type.
        case trackerDefined = 28
        /// A tracker entry: name, level, value, timestamp, day, category.
        case trackerEntry = 29
        /// A torn tail cut off the log: date, offset, length, digest, the file it was kept in.
        case tailCut = 30
        /// An exercise defined: date, name, body parts, motion.
        case exerciseDefined = 31
        /// A set practised: exercise name, body parts, motion, repetitions, seconds, timestamp.
        case practiceLogged = 32

        /// What events of a kind are, one switch for every reader of event bytes (a new kind must
        /// say which it is): definitions a key's tables learn from, the audit trail, a statement
        /// about another event, or the person's data (deduplicated by content, erased by month).
        package enum Role {
            case definition, audit, supersession, data
        }

        package var role: Role {
            switch self {
            case .defineString, .defineSource:
                .definition
            case .vaultCreated, .passphraseChanged, .importRecorded, .goalSet, .sourceOrderSet, .recipientAdded, .consentGranted,
                 .consentRevoked, .exportPerformed, .identityRecorded, .masterKeyRotated, .erased, .companionPaired, .companionRevoked,
                 .trackerDefined, .tailCut, .exerciseDefined:
                .audit
            case .sampleSuperseded:
                .supersession
            case .sample, .workout, .route, .activitySummary, .characteristics, .correlation, .correlationWhole, .genericRecord,
                 .electrocardiogram, .genericRecordWithResource, .trackerEntry, .practiceLogged:
                .data
            }
        }
    }

    /// The bits of a sample's extras field (after its value).
    package enum SampleExtras {
        package static let metadata: UInt64 = 1
        package static let beats: UInt64 = 2
        package static let creationDate: UInt64 = 4
        /// Set by every sample written since identities cover every field (docs/event-encoding.md);
        /// samples written before have the identity prefix of `EventIdentity.legacyPrefixLength`.
        package static let wholeIdentity: UInt64 = 8
        package static let known: UInt64 = 15
    }

    /// Seconds of 2001-01-01T00:00:00Z (Apple's reference date): timestamps are stored relative to it.
    package static let epoch: Int64 = 978_307_200
}

/// Writes the encoding's primitives, each defined once here in terms of `append`: an event's
/// array (`EventWriter`) and a sample's fixed fields in a buffer on the stack (`FieldBuffer`)
/// write the same bytes.
package protocol PrimitiveWriter: ByteSink {}

extension PrimitiveWriter {
    package mutating func varint(_ value: UInt64) { Varint.encode(value, into: &self) }
    package mutating func varint(_ value: Int) { varint(UInt64(value)) }
    package mutating func signed(_ value: Int64) { varint(ZigZag.encode(value)) }

    /// Seconds since 2001 and the UTC offset (in quarter hours when whole, else minutes).
    package mutating func timestamp(_ t: HealthTimestamp) {
        signed(t.seconds - EventCoding.epoch)
        utcOffset(t.utcOffset)
    }

    /// Quarter hours when whole (one byte for every offset in use), else minutes; low bit says which.
    package mutating func utcOffset(_ o: Int32) {
        let (value, minutes): (Int64, UInt64) = o % 900 == 0 ? (Int64(o / 900), 0) : (Int64(o / 60), 1)
        varint(ZigZag.encode(value) << 1 | minutes)
    }

    /// Exact decimals as zigzag(mantissa) << 5 | scale; others as 31 followed by 8 bytes.
    package mutating func decimal(_ d: DecimalValue) {
        if d.exact, d.scale < 31, d.mantissa > Int64.min >> 6, d.mantissa < Int64.max >> 6 {
            varint(ZigZag.encode(d.mantissa) << 5 | UInt64(d.scale))
        } else {
            varint(31)
            let bits = d.double.bitPattern
            for k in 0..<8 { append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(k)))) }
        }
    }
}

/// Appends the primitives of the encoding to an array.
package struct EventWriter: PrimitiveWriter {
    package var bytes: [UInt8] = []

    package init(kind: EventCoding.Kind) {
        bytes.reserveCapacity(64)
        bytes.append(EventCoding.version)
        varint(kind.rawValue)
    }

    /// A writer that appends to `storage`'s bytes, left empty until the caller swaps `bytes` back.
    package init(continuing storage: inout [UInt8]) {
        swap(&bytes, &storage)
    }

    package mutating func append(_ byte: UInt8) { bytes.append(byte) }

    package mutating func string(_ s: String) {
        let utf8 = s.utf8
        varint(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    /// Milliseconds since 1970, for audit timestamps.
    package mutating func date(_ date: Date) { signed(Int64((date.timeIntervalSince1970 * 1000).rounded())) }

    /// Writes fields of a known greatest size through a `FieldBuffer` and appends them at once.
    package mutating func fields(upTo capacity: Int, _ body: (inout FieldBuffer) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var fields = FieldBuffer(buffer)
            body(&fields)
            bytes.append(contentsOf: fields.written)
        }
    }
}

/// Fields written into memory the caller provides (a buffer on the stack), to be appended to an
/// event's array at once: an `Array` append for every byte, each checking that the array is not
/// shared, took 12–14 % of a FIT folder's import session (docs/benchmarks.md, "FIT files").
/// Writing past the buffer's end stops the program.
package struct FieldBuffer: PrimitiveWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var count = 0

    package init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        capacity = buffer.count
    }

    @inline(__always)
    package mutating func append(_ byte: UInt8) {
        precondition(count < capacity, "field buffer full")
        start[count] = byte
        count += 1
    }

    /// The bytes written so far.
    package var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }
}

/// Reads the primitives; every read is bounds-checked.
package struct EventReader {
    package let bytes: UnsafeRawBufferPointer
    package var offset = 0
    package let index: UInt64

    package init(_ bytes: UnsafeRawBufferPointer, index: UInt64) {
        self.bytes = bytes
        self.index = index
    }

    package var isAtEnd: Bool { offset == bytes.count }

    package func fail(_ reason: String) -> UndecodableEvent { UndecodableEvent(index: index, reason: reason) }

    package mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw fail("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func varint() throws -> UInt64 {
        let start = offset
        guard let value = Varint.decode(bytes, offset: &offset) else {
            // The codec stops at the end, or just after the byte that overflows.
            let ranOut = offset == bytes.count && (offset == start || bytes[offset - 1] & 0x80 != 0)
            throw fail(ranOut ? "truncated" : "varint overflow")
        }
        return value
    }

    package mutating func count(limit: Int = 1 << 24) throws -> Int {
        let n = try varint()
        guard n <= UInt64(limit), n <= UInt64(bytes.count - offset) * 64 + 64 else { throw fail("count out of range") }
        return Int(n)
    }

    package mutating func signed() throws -> Int64 {
        ZigZag.decode(try varint())
    }

    /// `n` raw bytes at the current offset.
    package mutating func rawBytes(_ n: Int) throws -> [UInt8] {
        guard n <= bytes.count - offset else { throw fail("truncated") }
        defer { offset += n }
        return Array(bytes[offset..<offset + n])
    }

    package mutating func string() throws -> String {
        try inlineString(length: try varint())
    }

    /// `length` bytes of UTF-8 at the current offset.
    package mutating func inlineString(length n: UInt64) throws -> String {
        guard n <= UInt64(bytes.count - offset) else { throw fail("truncated string") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(n)])
        offset += Int(n)
        guard let s = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8") }
        return s
    }

    package mutating func date() throws -> Date {
        Date(timeIntervalSince1970: Double(try signed()) / 1000)
    }

    package mutating func timestamp() throws -> HealthTimestamp {
        let (seconds, overflow) = try signed().addingReportingOverflow(EventCoding.epoch)
        guard !overflow else { throw fail("timestamp out of range") }
        return HealthTimestamp(seconds: seconds, utcOffset: try utcOffset())
    }

    /// `a + b`, or a decoding error instead of a trap when corrupted bytes overflow.
    package func sum(_ a: Int64, _ b: Int64) throws -> Int64 {
        let (s, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw fail("value out of range") }
        return s
    }

    package mutating func utcOffset() throws -> Int32 {
        let code = try varint()
        let value = ZigZag.decode(code >> 1)
        guard abs(value) <= 18 * 60 else { throw fail("UTC offset out of range") }
        let seconds = code & 1 == 0 ? value * 900 : value * 60
        guard abs(seconds) <= 18 * 3600 else { throw fail("UTC offset out of range") }
        return Int32(seconds)
    }

    package mutating func decimal() throws -> DecimalValue {
        let code = try varint()
        let scale = code & 31
        if scale == 31 {
            guard bytes.count - offset >= 8 else { throw fail("truncated number") }
            let bits = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
            offset += 8
            return DecimalValue(double: Double(bitPattern: bits))
        }
        guard scale <= 18 else { throw fail("decimal scale out of range") }
        return DecimalValue(mantissa: ZigZag.decode(code >> 5), scale: UInt8(scale))
    }
}
