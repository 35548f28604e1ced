/// One field's value as the file holds it: the base type's invalid value (0xFF for a uint8, 0 for
/// a `z` type, ...) is no value. Arrays keep their valid elements; an array of the `byte` type is
/// a bit field whose bytes are all kept (invalid only when every one is 0xFF, the SDK's rule).
enum FITValue: Equatable {
    case unsigned(UInt64)
    case signed(Int64)
    case float(Double)
    case text(String)
    case array([Int64])
    case bytes([UInt8])

    /// The value of a field's bytes; nil when it is the base type's invalid value.
    static func read(_ bytes: ArraySlice<UInt8>, baseType: UInt8, bigEndian: Bool) -> FITValue? {
        let type = baseType & 0x1F
        // No array per field: a million records make a few million fields.
        func integer(_ slice: ArraySlice<UInt8>) -> UInt64 {
            var value: UInt64 = 0
            if bigEndian {
                for byte in slice { value = value << 8 | UInt64(byte) }
            } else {
                var shift: UInt64 = 0
                for byte in slice {
                    value |= UInt64(byte) << shift
                    shift += 8
                }
            }
            return value
        }
        switch type {
        case 0x07:
            let text = bytes.prefix { $0 != 0 }
            return text.isEmpty ? nil : .text(String(decoding: text, as: UTF8.self))
        case 0x08, 0x09:
            let width = type == 0x08 ? 4 : 8
            guard bytes.count >= width else { return nil }
            let raw = integer(bytes.prefix(width))
            if raw == (width == 4 ? 0xFFFF_FFFF : UInt64.max) { return nil }
            return .float(width == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x0D where bytes.count > 1:
            return bytes.allSatisfy { $0 == 0xFF } ? nil : .bytes(Array(bytes))
        default:
            guard let (width, signed, invalid) = integerTypes[type] else { return nil }
            let count = bytes.count / width
            guard count >= 1 else { return nil }
            var values: [Int64] = []
            var first: FITValue?
            for i in 0..<count {
                let start = bytes.startIndex + i * width
                let raw = integer(bytes[start..<(start + width)])
                guard raw != invalid else { continue }
                let value: Int64
                if signed {
                    let shift = UInt64(64 - width * 8)
                    value = Int64(bitPattern: raw << shift) >> Int64(shift)
                } else {
                    value = Int64(bitPattern: raw)
                }
                if i == 0 { first = signed ? .signed(value) : .unsigned(raw) }
                values.append(value)
            }
            if count == 1 { return first }
            return values.isEmpty ? nil : .array(values)
        }
    }

    /// Width in bytes, signedness and invalid value of each integer base type (by its low 5 bits).
    static let integerTypes: [UInt8: (Int, Bool, UInt64)] = [
        0x00: (1, false, 0xFF), 0x01: (1, true, 0x7F), 0x02: (1, false, 0xFF), 0x03: (2, true, 0x7FFF), 0x04: (2, false, 0xFFFF),
        0x05: (4, true, 0x7FFF_FFFF), 0x06: (4, false, 0xFFFF_FFFF), 0x0A: (1, false, 0), 0x0B: (2, false, 0), 0x0C: (4, false, 0),
        0x0D: (1, false, 0xFF), 0x0E: (8, true, 0x7FFF_FFFF_FFFF_FFFF), 0x0F: (8, false, UInt64.max), 0x10: (8, false, 0),
    ]

    var number: Double? {
        switch self {
        case .unsigned(let v): Double(v)
        case .signed(let v): Double(v)
        case .float(let v): v.isFinite ? v : nil
        case .array(let v): v.first.map(Double.init)
        case .text, .bytes: nil
        }
    }
}

/// A data message: its global number, its valid fields by number, its timestamp (field 253, or
/// a compressed header's).
struct FITMessage {
    var global: UInt16
    /// Its valid fields by number, in the order defined (a few each: a list beats hashing).
    var fields = FieldList()
    var timestamp: UInt32?

    init(global: UInt16) { self.global = global }

    struct FieldList {
        var entries: [(number: UInt8, value: FITValue)] = []

        subscript(number: UInt8) -> FITValue? {
            get { entries.first { $0.number == number }?.value }
            set {
                entries.removeAll { $0.number == number }
                if let newValue { entries.append((number, newValue)) }
            }
        }
    }

    /// A field as a number, divided by its scale and less its offset (the profile's rule).
    func value(_ field: UInt8, scale: Double = 1, offset: Double = 0) -> Double? {
        fields[field]?.number.map { $0 / scale - offset }
    }

    /// A field's integers: its array's elements, or its one value.
    func integers(_ field: UInt8) -> [Int64] {
        switch fields[field] {
        case .array(let v)?: v
        case .unsigned(let v)?: Int64(exactly: v).map { [$0] } ?? []
        case .signed(let v)?: [v]
        default: []
        }
    }

    func integer(_ field: UInt8) -> Int64? {
        switch fields[field] {
        case .unsigned(let v)?: Int64(exactly: v)
        case .signed(let v)?: v
        case .array(let v)?: v.first
        default: nil
        }
    }

    /// A date field (seconds since the FIT epoch) in seconds since 1970.
    func date(_ field: UInt8) -> Int64? {
        if field == 253, let timestamp { return Int64(timestamp) + FITDecoder.epoch }
        return integer(field).map { $0 + FITDecoder.epoch }
    }

    /// A position field (semicircles) in degrees.
    func degrees(_ field: UInt8) -> Double? {
        integer(field).map { Double($0) * 180 / 2_147_483_648 }
    }
}
