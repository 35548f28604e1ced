/// Garmin's FIT protocol read from its bytes (docs/fit.md): the file header and its CRC,
/// definition and data messages with their local message types and byte order, compressed
/// timestamp headers, developer fields (skipped by their declared sizes), chained files, and each
/// file's closing CRC. Messages are handed on as raw field values; `FITMessage` reads them with a
/// field's scale and offset. Nothing is allocated from a size the file states without checking it
/// against the bytes there are.
struct FITDecoder {
    /// Where a FIT file could not be read, and why: the byte offset from the start of the input.
    struct Damage: Error, Equatable, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "byte \(offset): \(reason)" }
    }

    /// What a pass over the bytes met, beside the messages.
    struct Summary: Equatable {
        /// Files read whole (chained files are several), and their messages.
        var files = 0
        var messages = 0
        var compressedTimestamps = 0
        var developerFields = 0
        /// Where the bytes stopped making sense, after the files read whole (nil: they all did).
        var damage: Damage?
    }

    /// The FIT epoch (1989-12-31T00:00:00Z) in seconds since 1970.
    static let epoch: Int64 = 631_065_600

    /// Decodes every message of every chained file in `bytes`, calling `body` with each file's
    /// messages once that file's CRC checked out (a file is taken whole or not at all). A damaged
    /// first file throws; damage after a whole file ends the pass and is reported in the summary.
    static func decode(_ bytes: [UInt8], _ body: ([FITMessage]) throws -> Void) throws -> Summary {
        var summary = Summary()
        var start = 0
        while start < bytes.count {
            do {
                let (messages, end, counts) = try decodeFile(bytes, at: start)
                try body(messages)
                summary.files += 1
                summary.messages += messages.count
                summary.compressedTimestamps += counts.compressed
                summary.developerFields += counts.developer
                start = end
            } catch let damage as Damage {
                guard summary.files > 0 else { throw damage }
                summary.damage = damage
                break
            }
        }
        return summary
    }

    /// One file from its header at `start` to its CRC: its messages, where it ends, and counts.
    static func decodeFile(_ bytes: [UInt8], at start: Int) throws -> ([FITMessage], Int, (compressed: Int, developer: Int)) {
        func fail(_ offset: Int, _ reason: String) -> Damage { Damage(offset: offset, reason: reason) }
        guard bytes.count - start >= 12 else { throw fail(start, "too short for a FIT header") }
        let headerSize = Int(bytes[start])
        guard headerSize == 12 || headerSize == 14, bytes.count - start >= headerSize,
              bytes[start + 8] == 0x2E, bytes[start + 9] == 0x46, bytes[start + 10] == 0x49, bytes[start + 11] == 0x54 else {
            throw fail(start, "not a FIT file header")
        }
        if headerSize == 14 {
            let stated = UInt16(bytes[start + 12]) | UInt16(bytes[start + 13]) << 8
            if stated != 0, stated != FITCRC.of(bytes[start..<(start + 12)]) { throw fail(start + 12, "the header's CRC does not match it") }
        }
        let dataSize = Int(UInt32(bytes[start + 4]) | UInt32(bytes[start + 5]) << 8 | UInt32(bytes[start + 6]) << 16 | UInt32(bytes[start + 7]) << 24)
        let dataEnd = start + headerSize + dataSize
        guard dataSize <= bytes.count, dataEnd + 2 <= bytes.count else {
            throw fail(bytes.count, "the file ends before its \(dataSize) bytes of records and CRC (cut short)")
        }
        guard FITCRC.of(bytes[start..<(dataEnd + 2)]) == 0 else { throw fail(dataEnd, "the file's CRC does not match its bytes") }

        // By local message type (0-15): an array, not a dictionary that hashes every record's type.
        var definitions = [FITDefinition?](repeating: nil, count: 16)
        var messages: [FITMessage] = []
        var lastTimestamp: UInt32?
        var compressed = 0, developer = 0
        var p = start + headerSize
        while p < dataEnd {
            let header = bytes[p]
            let recordStart = p
            p += 1
            if header & 0x80 != 0 {
                // A compressed timestamp header: the local type in bits 5-6, the seconds in bits 0-4.
                let local = (header >> 5) & 0x03
                guard let definition = definitions[Int(local)] else { throw fail(recordStart, "a compressed-timestamp record of undefined local type \(local)") }
                guard let last = lastTimestamp else { throw fail(recordStart, "a compressed timestamp with no timestamp before it") }
                let offset = UInt32(header & 0x1F)
                var timestamp = (last & ~0x1F) + offset
                if offset < last & 0x1F { timestamp += 0x20 }
                var message = try definition.read(bytes, at: &p, end: dataEnd, fail: fail)
                message.timestamp = timestamp
                lastTimestamp = timestamp
                messages.append(message)
                compressed += 1
            } else if header & 0x40 != 0 {
                let local = header & 0x0F
                let definition = try FITDefinition.parse(bytes, at: &p, end: dataEnd, developer: header & 0x20 != 0, fail: fail)
                developer += definition.developerSizes.count
                definitions[Int(local)] = definition
            } else {
                let local = header & 0x0F
                guard let definition = definitions[Int(local)] else { throw fail(recordStart, "a data record of undefined local type \(local)") }
                let message = try definition.read(bytes, at: &p, end: dataEnd, fail: fail)
                if let timestamp = message.timestamp { lastTimestamp = timestamp }
                messages.append(message)
            }
        }
        return (messages, dataEnd + 2, (compressed, developer))
    }
}

/// FIT's CRC-16 (CRC-16/ARC, the SDK's nibble-table algorithm done a byte at a time): over a whole
/// file including its two CRC bytes it is 0.
enum FITCRC {
    /// The CRC's step for each byte value: the reflected polynomial 0xA001, eight bits at a time.
    static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        return crc
    }

    static func of(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        table.withUnsafeBufferPointer { table in
            bytes.withUnsafeBufferPointer { bytes in
                var crc: UInt16 = 0
                for byte in bytes { crc = (crc >> 8) ^ table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] }
                return crc
            }
        }
    }
}

/// A definition message: which global message a local type stands for, its byte order, and its
/// fields (number, size, base type), then the developer fields' sizes.
struct FITDefinition {
    var global: UInt16
    var bigEndian: Bool
    var fields: [(number: UInt8, size: Int, baseType: UInt8)]
    var developerSizes: [Int]
    /// Where each field lies in a record, shared by every message read with this definition.
    let layout: Layout
    /// A record's bytes: its fields' and developer fields' sizes.
    let recordSize: Int

    init(global: UInt16, bigEndian: Bool, fields: [(number: UInt8, size: Int, baseType: UInt8)], developerSizes: [Int]) {
        self.global = global
        self.bigEndian = bigEndian
        self.fields = fields
        self.developerSizes = developerSizes
        layout = Layout(fields, bigEndian: bigEndian)
        recordSize = fields.reduce(0) { $0 + $1.size } + developerSizes.reduce(0, +)
    }

    /// The fields of a definition by number: where each starts in a record, its size and base type,
    /// found without a search (a table of the 256 field numbers).
    final class Layout {
        struct Field {
            var offset: Int
            var size: Int
            var baseType: UInt8
            /// Width, signedness and invalid value when the base type is an integer.
            var integerType: (width: Int, signed: Bool, invalid: UInt64)?
        }

        let fields: [Field]
        let bigEndian: Bool
        /// The first field of each number (-1: none), and each field's next one of its number
        /// (a definition may repeat a number; the first valid one is the field's value).
        private let first: [Int16]
        private let next: [Int16]
        /// Whether the timestamp (253) is one unsigned integer field of up to 32 bits, defined once:
        /// read as such.
        let hasPlainTimestamp: Bool

        init(_ defined: [(number: UInt8, size: Int, baseType: UInt8)], bigEndian: Bool) {
            self.bigEndian = bigEndian
            var fields: [Field] = []
            var offset = 0
            for field in defined {
                let integer = FITValue.integerType(field.baseType & 0x1F).map { (width: $0.0, signed: $0.1, invalid: $0.2) }
                fields.append(Field(offset: offset, size: field.size, baseType: field.baseType, integerType: integer))
                offset += field.size
            }
            self.fields = fields
            var first = [Int16](repeating: -1, count: 256)
            var next = [Int16](repeating: -1, count: defined.count)
            for i in defined.indices.reversed() {
                let number = Int(defined[i].number)
                next[i] = first[number]
                first[number] = Int16(i)
            }
            self.first = first
            self.next = next
            hasPlainTimestamp = Self.plainInteger(253, fields: fields, first: first, next: next)
                .map { !$0.integerType!.signed && $0.size <= 4 } ?? false
        }

        /// The one field of `number`, when the definition has exactly one and it is an integer as
        /// wide as its base type (most fields): read without building a `FITValue`.
        func plainInteger(_ number: UInt8) -> Field? {
            Self.plainInteger(number, fields: fields, first: first, next: next)
        }

        private static func plainInteger(_ number: UInt8, fields: [Field], first: [Int16], next: [Int16]) -> Field? {
            let i = Int(first[Int(number)])
            guard i >= 0, next[i] < 0, let type = fields[i].integerType, type.width == fields[i].size else { return nil }
            return fields[i]
        }

        func firstIndex(of number: UInt8) -> Int? {
            let i = first[Int(number)]
            return i < 0 ? nil : Int(i)
        }

        func nextIndex(after index: Int, of number: UInt8) -> Int? {
            let i = next[index]
            return i < 0 ? nil : Int(i)
        }
    }

    static func parse(_ bytes: [UInt8], at p: inout Int, end: Int, developer: Bool,
                      fail: (Int, String) -> FITDecoder.Damage) throws -> FITDefinition {
        let start = p - 1
        guard end - p >= 5 else { throw fail(start, "a definition record cut short") }
        let bigEndian = bytes[p + 1] == 1
        guard bytes[p + 1] <= 1 else { throw fail(p + 1, "a definition of unknown byte order \(bytes[p + 1])") }
        let global = bigEndian ? UInt16(bytes[p + 2]) << 8 | UInt16(bytes[p + 3]) : UInt16(bytes[p + 2]) | UInt16(bytes[p + 3]) << 8
        let count = Int(bytes[p + 4])
        p += 5
        guard end - p >= count * 3 else { throw fail(start, "a definition record cut short") }
        var fields: [(UInt8, Int, UInt8)] = []
        for i in 0..<count {
            let size = Int(bytes[p + 3 * i + 1])
            guard size > 0 else { throw fail(p + 3 * i, "a field of size 0") }
            fields.append((bytes[p + 3 * i], size, bytes[p + 3 * i + 2]))
        }
        p += count * 3
        var developerSizes: [Int] = []
        if developer {
            guard end - p >= 1 else { throw fail(start, "a definition record cut short") }
            let developerCount = Int(bytes[p])
            p += 1
            guard end - p >= developerCount * 3 else { throw fail(start, "a definition record cut short") }
            for i in 0..<developerCount { developerSizes.append(Int(bytes[p + 3 * i + 1])) }
            p += developerCount * 3
        }
        return FITDefinition(global: global, bigEndian: bigEndian, fields: fields, developerSizes: developerSizes)
    }

    /// A data record as this definition lays it out (its fields read when asked for); developer
    /// fields are skipped.
    func read(_ bytes: [UInt8], at p: inout Int, end: Int, fail: (Int, String) -> FITDecoder.Damage) throws -> FITMessage {
        guard end - p >= recordSize else { throw fail(p - 1, "a data record cut short (\(recordSize) bytes defined, \(end - p) left)") }
        var message = FITMessage(global: global, fields: FITMessage.FieldList(bytes: bytes, layout: layout, offset: p))
        // The timestamp field (253), as the last valid one of the definition gave it.
        if layout.hasPlainTimestamp {
            message.timestamp = message.fields.integer(253).map { UInt32(truncatingIfNeeded: $0) }
            p += recordSize
            return message
        }
        var index = layout.firstIndex(of: 253)
        while let i = index {
            let field = layout.fields[i]
            if case .unsigned(let t)? = FITValue.read(bytes[(p + field.offset)..<(p + field.offset + field.size)], baseType: field.baseType, bigEndian: bigEndian) {
                message.timestamp = UInt32(truncatingIfNeeded: t)
            }
            index = layout.nextIndex(after: i, of: 253)
        }
        p += recordSize
        return message
    }
}
