import HealthModel

/// Which events are data (deduplicated by content) and which of their bytes make their identity.
///
/// The encoding puts a record's identifying fields first, so the identity of a stored event is a
/// prefix of its bytes (all of them for most kinds), found here by skipping fields, without
/// decoding strings. It must agree with `EventEncoder.encode`'s `identityLength` (tested).
///
/// Two schemes live side by side (docs/event-encoding.md, "Identity"):
/// - **whole**: samples written since identities cover every field (their extras carry
///   `SampleExtras.wholeIdentity`), kind-22 correlations, ECGs, and every other data kind: the identity
///   is the whole event. Workouts keep their type, source and span.
/// - **legacy prefix**: samples and kind-11 correlations written before: type, source, span and
///   value only. Such an event still matches a new import of the same record through
///   `legacyPrefixLength`, which both kinds of event have.
package enum EventIdentity {
    /// The identifying bytes of a stored data event: `length` bytes from the start, `legacy` when
    /// they are the old prefix scheme's.
    package struct Span: Equatable, Sendable {
        package var length: Int
        package var legacy: Bool
    }

    /// nil for definitions and audit events; otherwise which bytes identify the event.
    package static func span(of bytes: UnsafeRawBufferPointer) -> Span? {
        guard let kind = dataKind(bytes) else { return nil }
        switch kind {
        case .sample:
            guard let prefix = legacyPrefixLength(of: bytes) else { return Span(length: bytes.count, legacy: false) }
            var r = EventReader(bytes, index: 0)
            r.offset = prefix
            let extras = (try? r.varint()) ?? 0
            return extras & EventCoding.SampleExtras.wholeIdentity != 0 ? Span(length: bytes.count, legacy: false) : Span(length: prefix, legacy: true)
        case .correlation:
            return Span(length: legacyPrefixLength(of: bytes) ?? bytes.count, legacy: true)
        case .workout:
            return Span(length: prefixLength(of: bytes, kind: kind) ?? bytes.count, legacy: false)
        case .genericRecordWithResource:
            return Span(length: attributesEnd(of: bytes) ?? bytes.count, legacy: false)
        default:
            return Span(length: bytes.count, legacy: false)
        }
    }

    /// The length of the prefix the legacy scheme identified a sample or correlation by (type,
    /// source, span, and a sample's value), for events of either scheme; nil for other kinds.
    package static func legacyPrefixLength(of bytes: UnsafeRawBufferPointer) -> Int? {
        guard let kind = dataKind(bytes) else { return nil }
        switch kind {
        case .sample, .correlation, .correlationWhole: return prefixLength(of: bytes, kind: kind)
        default: return nil
        }
    }

    /// The legacy-scheme identity of a category sample, with its value compared by name: the
    /// event's kind, value kind 2, type, source and span as stored, then the value's name in
    /// UTF-8. iOS 8's numbered records were stored as quantities with an empty unit by builds
    /// before commit 3850060 (2026-11-24) and are category samples now; both spell the same value here
    /// (`NumberedCategoryValues`), so a later import of the same record matches such a copy.
    /// `string` resolves the event's string ids (its key's table). nil for any other event.
    package static func legacyCategoryIdentity(of bytes: UnsafeRawBufferPointer, string: (UInt64) -> String?) -> [UInt8]? {
        guard bytes.count >= 3, bytes[0] == EventCoding.version, bytes[1] == UInt8(EventCoding.Kind.sample.rawValue) else { return nil }
        var r = EventReader(bytes, index: 0)
        r.offset = 2
        do {
            let valueKind = try r.varint()
            let typeID = try r.varint()
            _ = try r.varint()  // source
            try skipSpan(&r)
            let spanEnd = r.offset
            let name: String
            switch valueKind {
            case 2:
                guard let value = string(try r.varint()) else { return nil }
                name = value
            case 1:
                let number = try r.decimal()
                guard let unit = string(try r.varint()), let type = string(typeID),
                      let numbered = EventDecoder.numberedCategoryValue(type: type, value: .quantity(number, unit: unit)) else { return nil }
                name = numbered
            default:
                return nil
            }
            var identity = Array(bytes[0..<2])
            identity.append(2)
            identity += bytes[3..<spanEnd]
            identity += name.utf8
            return identity
        } catch {
            return nil
        }
    }

    /// The kind a legacy identity is compared under: a kind-22 correlation matches a kind-11 one.
    package static func legacyKind(of bytes: UnsafeRawBufferPointer) -> UInt8 {
        bytes[1] == UInt8(EventCoding.Kind.correlationWhole.rawValue) ? UInt8(EventCoding.Kind.correlation.rawValue) : bytes[1]
    }

    /// The kind of a data event (a supersession is a statement about another event, not a
    /// record: never deduplicated); nil for any other bytes.
    private static func dataKind(_ bytes: UnsafeRawBufferPointer) -> EventCoding.Kind? {
        guard let kind = EncodedEvent(bytes).knownKind, kind.role == .data else { return nil }
        return kind
    }

    /// The kind byte identities are compared under: a record with a resource (kind 24) is the
    /// same record as one without it (kind 12), the resource being out of its identity.
    private static func identityKind(of bytes: UnsafeRawBufferPointer) -> UInt8 {
        bytes[1] == UInt8(EventCoding.Kind.genericRecordWithResource.rawValue) ? UInt8(EventCoding.Kind.genericRecord.rawValue) : bytes[1]
    }

    /// Calls `body` with an identity's bytes as identities are compared: a kind-24 record's under
    /// kind 12 (`identityKind`), every other as it is.
    package static func withComparedIdentity<T>(_ identity: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let kind = identityKind(of: identity)
        guard kind != identity[1] else { return try body(identity) }
        var normalized = Array(identity)
        normalized[1] = kind
        return try normalized.withUnsafeBytes(body)
    }

    /// Where a kind-24 record's attributes end (its resource follows).
    private static func attributesEnd(of bytes: UnsafeRawBufferPointer) -> Int? {
        var r = EventReader(bytes, index: 0)
        r.offset = 2
        do {
            _ = try r.varint()  // element
            let n = try r.varint()
            guard n <= UInt64(bytes.count) else { return nil }
            for _ in 0..<n {
                _ = try r.varint()  // key
                let code = try r.varint()
                if code & 1 == 1 {
                    let length = code >> 1
                    guard length <= UInt64(bytes.count - r.offset) else { return nil }
                    r.offset += Int(length)
                }
            }
            return r.offset
        } catch {
            return nil
        }
    }

    /// Type, source and span (and a sample's value); nil when the bytes end first.
    private static func prefixLength(of bytes: UnsafeRawBufferPointer, kind: EventCoding.Kind) -> Int? {
        var r = EventReader(bytes, index: 0)
        r.offset = 2
        do {
            switch kind {
            case .sample:
                let valueKind = try r.varint()
                _ = try r.varint()  // type
                _ = try r.varint()  // source
                try skipSpan(&r)
                switch valueKind {
                case 1:
                    _ = try r.decimal()
                    _ = try r.varint()  // unit
                case 2:
                    _ = try r.varint()
                default: break
                }
            default:
                _ = try r.varint()
                _ = try r.varint()
                try skipSpan(&r)
            }
            return r.offset
        } catch {
            return nil
        }
    }

    /// Where a quantity sample's slot and value end: bytes `2..<slotEnd` (value kind, type, source,
    /// span) say which metric, source and time range it covers, bytes `slotEnd..<valueEnd` its value
    /// and unit; `start` is its start in seconds since 1970. Ids are a key's own, so slots compare
    /// within one data key. nil for other events.
    package static func quantitySlot(of bytes: UnsafeRawBufferPointer) -> (source: UInt64, slotEnd: Int, valueEnd: Int, start: Int64)? {
        guard bytes.count >= 3, bytes[0] == EventCoding.version, bytes[1] == UInt8(EventCoding.Kind.sample.rawValue), bytes[2] == 1 else { return nil }
        var r = EventReader(bytes, index: 0)
        r.offset = 3
        do {
            _ = try r.varint()  // type
            let source = try r.varint()
            let start = try r.timestamp().seconds
            _ = try r.signed()
            if try r.varint() == 1 { _ = try r.utcOffset() }
            let slotEnd = r.offset
            _ = try r.decimal()
            _ = try r.varint()  // unit
            return (source, slotEnd, r.offset, start)
        } catch {
            return nil
        }
    }

    private static func skipSpan(_ r: inout EventReader) throws {
        _ = try r.timestamp()
        _ = try r.signed()
        if try r.varint() == 1 { _ = try r.utcOffset() }
    }
}
