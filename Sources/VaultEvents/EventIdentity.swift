/// Which events are data (deduplicated by content) and where their identity ends.
///
/// The encoding puts a record's identifying fields first, so the identity of a stored event is
/// a prefix of its bytes: found here by skipping fields, without decoding strings. It must
/// agree with `EventEncoder.encode`'s `identityLength` (tested).
package enum EventIdentity {
    /// nil for definitions and audit events; otherwise the length of the identifying prefix.
    package static func length(of bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 2, bytes[0] == EventCoding.version, bytes[1] < 0x80,
              let kind = EventCoding.Kind(rawValue: UInt64(bytes[1])) else { return nil }
        var r = EventReader(bytes, index: 0)
        r.offset = 2
        do {
            switch kind {
            case .defineString, .defineSource, .vaultCreated, .passphraseChanged, .importRecorded, .goalSet, .sourceOrderSet,
                 .recipientAdded, .consentGranted, .consentRevoked, .exportPerformed, .identityRecorded, .masterKeyRotated, .erased:
                return nil
            case .route, .activitySummary, .characteristics, .genericRecord:
                return bytes.count
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
                return r.offset
            case .workout, .correlation:
                _ = try r.varint()
                _ = try r.varint()
                try skipSpan(&r)
                return r.offset
            }
        } catch {
            return bytes.count
        }
    }

    private static func skipSpan(_ r: inout EventReader) throws {
        _ = try r.timestamp()
        _ = try r.signed()
        if try r.varint() == 1 { _ = try r.utcOffset() }
    }
}
