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
            slice.withUnsafeBufferPointer { rawInteger($0, bigEndian: bigEndian) }
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
            guard let (width, signed, invalid) = integerType(type) else { return nil }
            let count = bytes.count / width
            guard count >= 1 else { return nil }
            var values: [Int64] = []
            var first: FITValue?
            for i in 0..<count {
                let start = bytes.startIndex + i * width
                let raw = integer(bytes[start..<(start + width)])
                guard raw != invalid else { continue }
                let value = signed ? signExtended(raw, width: width) : Int64(bitPattern: raw)
                if i == 0 { first = signed ? .signed(value) : .unsigned(raw) }
                values.append(value)
            }
            if count == 1 { return first }
            return values.isEmpty ? nil : .array(values)
        }
    }

    /// The unsigned integer `bytes` hold, in the file's byte order.
    static func rawInteger(_ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool) -> UInt64 {
        var value: UInt64 = 0
        if bigEndian {
            for byte in bytes { value = value << 8 | UInt64(byte) }
        } else {
            for (k, byte) in bytes.enumerated() { value |= UInt64(byte) << UInt64(8 * k) }
        }
        return value
    }

    /// A signed integer `width` bytes wide, its sign extended to 64 bits.
    static func signExtended(_ raw: UInt64, width: Int) -> Int64 {
        let shift = UInt64(64 - width * 8)
        return Int64(bitPattern: raw << shift) >> Int64(shift)
    }

    /// Width in bytes, signedness and invalid value of an integer base type (by its low 5 bits);
    /// nil for the others. From a table by index, not a dictionary hashed for every field.
    static func integerType(_ type: UInt8) -> (Int, Bool, UInt64)? {
        Int(type) < integerTypeTable.count ? integerTypeTable[Int(type)] : nil
    }

    private static let integerTypeTable: [(Int, Bool, UInt64)?] = (0..<32).map { integerTypes[UInt8($0)] }

    private static let integerTypes: [UInt8: (Int, Bool, UInt64)] = [
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

/// A data message: its global number, its timestamp (field 253, or a compressed header's), and
/// its fields, read from the file's bytes when asked for (`FieldList`).
struct FITMessage {
    var global: UInt16
    /// Its valid fields by number.
    var fields: FieldList
    var timestamp: UInt32?

    init(global: UInt16, fields: FieldList) {
        self.global = global
        self.fields = fields
    }

    /// A record's fields as its definition lays them out in the file's bytes, read when asked for:
    /// a decoded message allocates nothing (a year of 1 Hz activities is a few million records,
    /// and a list of values per record cost the parser a third of its time in allocation, copies
    /// and reference counting). A field set on the message (`FITStoredHeartRate.merge`) is kept
    /// beside the bytes and read first.
    struct FieldList {
        let bytes: [UInt8]
        let layout: FITDefinition.Layout
        /// Where the record's first field starts in `bytes`.
        let offset: Int
        private var assigned: [(number: UInt8, value: FITValue?)] = []

        init(bytes: [UInt8], layout: FITDefinition.Layout, offset: Int) {
            self.bytes = bytes
            self.layout = layout
            self.offset = offset
        }

        subscript(number: UInt8) -> FITValue? {
            get {
                if !assigned.isEmpty, let entry = assigned.first(where: { $0.number == number }) { return entry.value }
                var index = layout.firstIndex(of: number)
                while let i = index {
                    let field = layout.fields[i]
                    let start = offset + field.offset
                    if let value = FITValue.read(bytes[start..<(start + field.size)], baseType: field.baseType, bigEndian: layout.bigEndian) {
                        return value
                    }
                    index = layout.nextIndex(after: i, of: number)
                }
                return nil
            }
            set {
                assigned.removeAll { $0.number == number }
                assigned.append((number, newValue))
            }
        }

        /// A field's one integer, read without building a `FITValue` (the records' hot path);
        /// nil when absent or invalid. Other shapes go through the subscript.
        func integer(_ number: UInt8) -> Int64? {
            guard let (raw, type) = plainInteger(number) else { return Self.integer(of: self[number]) }
            guard raw != type.invalid else { return nil }
            return type.signed ? FITValue.signExtended(raw, width: type.width) : Int64(exactly: raw)
        }

        /// A field as a number (an integer, or a float when finite); nil when absent or invalid.
        func number(_ number: UInt8) -> Double? {
            guard let (raw, type) = plainInteger(number) else { return self[number]?.number }
            guard raw != type.invalid else { return nil }
            return type.signed ? Double(FITValue.signExtended(raw, width: type.width)) : Double(raw)
        }

        /// The raw bits of a plain integer field (`Layout.plainInteger`) and its type; nil when the
        /// field is not one, or a value was set on the message.
        private func plainInteger(_ number: UInt8) -> (raw: UInt64, type: (width: Int, signed: Bool, invalid: UInt64))? {
            guard assigned.isEmpty, let field = layout.plainInteger(number), let type = field.integerType else { return nil }
            let raw = bytes.withUnsafeBufferPointer { all in
                FITValue.rawInteger(UnsafeBufferPointer(rebasing: all[(offset + field.offset)..<(offset + field.offset + field.size)]),
                                    bigEndian: layout.bigEndian)
            }
            return (raw, type)
        }

        private static func integer(of value: FITValue?) -> Int64? {
            switch value {
            case .unsigned(let v)?: Int64(exactly: v)
            case .signed(let v)?: v
            case .array(let v)?: v.first
            default: nil
            }
        }
    }

    /// A field as a number, divided by its scale and less its offset (the profile's rule).
    func value(_ field: UInt8, scale: Double = 1, offset: Double = 0) -> Double? {
        fields.number(field).map { $0 / scale - offset }
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
        fields.integer(field)
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
