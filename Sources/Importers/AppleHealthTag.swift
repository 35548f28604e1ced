import HealthModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The attributes every record may carry and the importer reads itself.
enum RecordAttribute: Int, CaseIterable {
    case type, sourceName, source, sourceVersion, device, unit, value, creationDate, startDate, endDate

    /// Which of them `name` is, if any: by length first.
    static func named(_ name: UnsafeRawBufferPointer) -> RecordAttribute? {
        switch name.count {
        case 4: eq(name, "type") ? .type : eq(name, "unit") ? .unit : nil
        case 5: eq(name, "value") ? .value : nil
        case 6: eq(name, "source") ? .source : eq(name, "device") ? .device : nil
        case 7: eq(name, "endDate") ? .endDate : nil
        case 9: eq(name, "startDate") ? .startDate : nil
        case 10: eq(name, "sourceName") ? .sourceName : nil
        case 12: eq(name, "creationDate") ? .creationDate : nil
        case 13: eq(name, "sourceVersion") ? .sourceVersion : nil
        default: nil
        }
    }
}

/// A start tag's attributes, with where its `RecordAttribute`s are found in one pass over the
/// names: a record's ten or so are looked up without comparing names again (each lookup by name
/// compared every attribute's: 3 % of a one-year import's instructions).
struct Tag {
    let bytes: UnsafeRawBufferPointer
    let attributes: [XMLAttribute]
    /// Index in `attributes` of the first attribute of each `RecordAttribute` (-1: none).
    private var known = SIMD16<Int32>(repeating: -1)
    /// Whether some attribute is none of the `RecordAttribute`s (a record's metadata).
    private(set) var hasOtherAttributes = false

    init(bytes: UnsafeRawBufferPointer, attributes: [XMLAttribute]) {
        self.bytes = bytes
        self.attributes = attributes
        for (i, a) in attributes.enumerated() {
            if let name = RecordAttribute.named(UnsafeRawBufferPointer(rebasing: bytes[a.name])) {
                if known[name.rawValue] < 0 { known[name.rawValue] = Int32(truncatingIfNeeded: i) }
            } else {
                hasOtherAttributes = true
            }
        }
    }

    /// The first attribute named `name`.
    subscript(_ name: RecordAttribute) -> XMLAttribute? {
        let i = known[name.rawValue]
        return i < 0 ? nil : attributes[Int(i)]
    }

    func attribute(_ name: StaticString) -> XMLAttribute? {
        let count = name.utf8CodeUnitCount
        for a in attributes where a.name.count == count {
            if memcmp(bytes.baseAddress! + a.name.lowerBound, name.utf8Start, count) == 0 { return a }
        }
        return nil
    }

    func value(_ name: RecordAttribute) -> UnsafeRawBufferPointer? { value(self[name]) }

    func number(_ name: RecordAttribute) -> DecimalValue? { number(self[name]) }

    func string(_ name: RecordAttribute, pool: inout StringPool, removed: inout Int) -> String? {
        self[name].flatMap { string($0, pool: &pool, removed: &removed) }
    }

    /// The raw value of a plain attribute; nil when absent or when it needs decoding (dates and
    /// numbers never do, so such a value is malformed for them).
    func value(_ name: StaticString) -> UnsafeRawBufferPointer? { value(attribute(name)) }

    func value(_ a: XMLAttribute?) -> UnsafeRawBufferPointer? {
        guard let a, !a.needsDecoding else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[a.value])
    }

    /// A number, decoding character references first when the value has any.
    func number(_ name: StaticString) -> DecimalValue? { number(attribute(name)) }

    func number(_ a: XMLAttribute?) -> DecimalValue? {
        guard let a else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[a.value])
        guard a.needsDecoding else { return DecimalValue.parse(raw) }
        return XMLText.decode(raw).flatMap { decoded in decoded.bytes.withUnsafeBytes { DecimalValue.parse($0) } }
    }

    /// A decoded string value through the pool.
    func string(_ name: StaticString, pool: inout StringPool, removed: inout Int) -> String? {
        attribute(name).flatMap { string($0, pool: &pool, removed: &removed) }
    }

    func string(_ a: XMLAttribute, pool: inout StringPool, removed: inout Int) -> String? {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[a.value])
        guard a.needsDecoding else { return pool.string(raw) }
        guard let decoded = XMLText.decode(raw) else { return nil }
        removed += decoded.controlsRemoved
        return decoded.bytes.withUnsafeBytes { pool.string($0) }
    }
}

/// An element's name without its namespace prefix (`gpxtpx:hr` → `hr`, `ns3:Speed` → `Speed`).
func localName(_ name: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
    guard let colon = name.lastIndex(of: 0x3A) else { return name }
    return UnsafeRawBufferPointer(rebasing: name[(colon + 1)...])
}

@inline(__always)
func eq(_ bytes: UnsafeRawBufferPointer, _ s: StaticString) -> Bool {
    bytes.count == s.utf8CodeUnitCount && memcmp(bytes.baseAddress!, s.utf8Start, bytes.count) == 0
}

/// A record's source attributes as written (`sourceName`, `source`, `sourceVersion`, `device`, in
/// this order, each present or not) and the source they made. `readSource` is a function of those bytes alone (a
/// device is looked up by its bytes after the object address, which the source leaves out), so
/// equal bytes make an equal source; the control characters decoding removed are counted again.
struct ParsedSource {
    /// Each attribute's value bytes one after the other, and where each ends (-1: absent).
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    let source: HealthSource?
    let controlsRemoved: Int

    /// The attributes a source is read from, in order.
    private static let names: [RecordAttribute] = [.sourceName, .source, .sourceVersion, .device]

    init(_ tag: Tag, source: HealthSource?, controlsRemoved: Int) {
        for name in Self.names {
            if let attribute = tag[name] {
                bytes.append(contentsOf: Self.value(attribute, in: tag.bytes, isDevice: name == .device))
                ends.append(bytes.count)
            } else {
                ends.append(-1)
            }
        }
        self.source = source
        self.controlsRemoved = controlsRemoved
    }

    func matches(_ tag: Tag) -> Bool {
        var start = 0
        for (name, end) in zip(Self.names, ends) {
            guard let attribute = tag[name] else {
                if end != -1 { return false }
                continue
            }
            guard end >= 0 else { return false }
            let value = Self.value(attribute, in: tag.bytes, isDevice: name == .device)
            guard value.count == end - start else { return false }
            if value.count > 0, !bytes.withUnsafeBytes({ memcmp($0.baseAddress! + start, value.baseAddress!, value.count) == 0 }) { return false }
            start = end
        }
        return true
    }

    /// The value's bytes; a device's only after its object address (`deviceKeyBytes`).
    private static func value(_ attribute: XMLAttribute, in tagBytes: UnsafeRawBufferPointer, isDevice: Bool) -> UnsafeRawBufferPointer {
        let raw = UnsafeRawBufferPointer(rebasing: tagBytes[attribute.value])
        return isDevice ? AppleHealthHandler.deviceKeyBytes(raw) : raw
    }
}
