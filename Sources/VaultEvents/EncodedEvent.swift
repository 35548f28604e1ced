/// A stored event's bytes as the vault looks at them before (or instead of) decoding them: what
/// kind of event they are. The encoding puts the format version first and the kind second, one
/// varint byte below 128 (docs/event-encoding.md); this view is the one place outside the codec
/// that knows it, so the vault never reads event bytes by offset.
package struct EncodedEvent {
    package let bytes: UnsafeRawBufferPointer

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The kind the kind byte names, whatever the version byte (the decoder that follows checks
    /// it); nil for bytes too short to hold one or a kind this build does not know.
    private var namedKind: EventCoding.Kind? { bytes.count >= 2 ? EventCoding.Kind(rawValue: UInt64(bytes[1])) : nil }

    /// The kind, nil unless the bytes are this encoding's version and a kind it knows: what a newer
    /// build wrote is nil, and must not be skipped as if it were understood.
    package var knownKind: EventCoding.Kind? {
        guard bytes.count >= 2, bytes[0] == EventCoding.version, bytes[1] < 0x80 else { return nil }
        return EventCoding.Kind(rawValue: UInt64(bytes[1]))
    }

    /// Whether the kind byte is `kind`'s (the version is checked by the decoder that follows).
    package func isKind(_ kind: EventCoding.Kind) -> Bool { namedKind == kind }

    /// A string or source definition, which a data key's table learns from.
    package var isDefinition: Bool { namedKind?.role == .definition }

    /// An audit event (imports, goals, recipients, consents, exports, erasures, passphrase
    /// changes, ...): none interns strings, so each decodes on its own.
    package var isAudit: Bool { namedKind?.role == .audit }
}
