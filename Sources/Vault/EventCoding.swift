import Foundation

/// The binary encoding of `VaultEvent`s inside log frames (docs/event-encoding.md).
///
/// Every event starts with the encoding version (1 byte) and the kind (varint); fields follow
/// in a fixed order per kind. Decoders reject unknown versions and kinds instead of guessing.
enum EventCoding {
    static let version: UInt8 = 1

    enum Kind: UInt64 {
        case vaultCreated = 1
        case passphraseChanged = 2
    }

    static func encode(_ event: VaultEvent) -> [UInt8] {
        var out: [UInt8] = [version]
        switch event {
        case .vaultCreated(let at, let kdf):
            appendVarint(Kind.vaultCreated.rawValue, to: &out)
            appendTimestamp(at, to: &out)
            appendString(kdf, to: &out)
        case .passphraseChanged(let at):
            appendVarint(Kind.passphraseChanged.rawValue, to: &out)
            appendTimestamp(at, to: &out)
        }
        return out
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, index: UInt64) throws -> VaultEvent {
        var cursor = Cursor(bytes: bytes)
        func fail(_ reason: String) -> VaultError { .undecodableEvent(index: index, reason: reason) }
        guard let v = cursor.byte() else { throw fail("empty") }
        guard v == version else { throw fail("encoding version \(v) is newer than this build reads") }
        guard let rawKind = cursor.varint() else { throw fail("truncated kind") }
        guard let kind = Kind(rawValue: rawKind) else { throw fail("unknown kind \(rawKind)") }
        let event: VaultEvent
        switch kind {
        case .vaultCreated:
            guard let at = cursor.timestamp(), let kdf = cursor.string() else { throw fail("truncated vaultCreated") }
            event = .vaultCreated(at: at, kdf: kdf)
        case .passphraseChanged:
            guard let at = cursor.timestamp() else { throw fail("truncated passphraseChanged") }
            event = .passphraseChanged(at: at)
        }
        guard cursor.isAtEnd else { throw fail("trailing bytes") }
        return event
    }

    // MARK: Primitives

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Milliseconds since 1970, zigzag varint.
    static func appendTimestamp(_ date: Date, to out: inout [UInt8]) {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        appendVarint(UInt64(bitPattern: (ms << 1) ^ (ms >> 63)), to: &out)
    }

    static func appendString(_ string: String, to out: inout [UInt8]) {
        let utf8 = Array(string.utf8)
        appendVarint(UInt64(utf8.count), to: &out)
        out.append(contentsOf: utf8)
    }

    struct Cursor {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while let b = byte() {
                if shift > 63 || (shift == 63 && b > 1) { return nil }
                result |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }

        mutating func timestamp() -> Date? {
            guard let z = varint() else { return nil }
            let ms = Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
            return Date(timeIntervalSince1970: Double(ms) / 1000)
        }

        mutating func string() -> String? {
            guard let n = varint(), n <= UInt64(bytes.count - offset) else { return nil }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(n)])
            offset += Int(n)
            return String(validating: slice, as: UTF8.self)
        }
    }
}
