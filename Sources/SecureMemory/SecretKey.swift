import CSodium

/// A 256-bit symmetric key held in secure memory.
///
/// The vault's master key is one of these; the keys that seal frames, authenticate the head
/// record or seal other files are derived from it with `derive(subkeyID:context:)`, so that
/// no two purposes ever share a key.
public struct SecretKey: Sendable {
    /// Key length in bytes (XChaCha20-Poly1305 and BLAKE2b keys alike).
    public static let byteCount = 32

    /// The secure allocation holding the key: its own, or an arena shared by many keys (a key
    /// table's), the key at `offset`.
    package let storage: SecureBytes
    package let offset: Int

    /// A new random key.
    public static func random() -> SecretKey {
        SecretKey(storage: SecureBytes(randomCount: byteCount))
    }

    /// Wraps existing secure bytes, which must be `byteCount` long.
    public init(_ bytes: SecureBytes) {
        precondition(bytes.count == Self.byteCount, "a SecretKey is \(Self.byteCount) bytes")
        self.storage = bytes
        self.offset = 0
    }

    package init(storage: SecureBytes) {
        self.storage = storage
        self.offset = 0
    }

    private init(arena: SecureBytes, offset: Int) {
        self.storage = arena
        self.offset = offset
    }

    /// The keys laid end to end in `arena` (its size a multiple of `byteCount`), sharing its one
    /// secure allocation: a table of hundreds of keys costs one `sodium_malloc`, not hundreds.
    public static func keys(in arena: SecureBytes) -> [SecretKey] {
        precondition(arena.count % byteCount == 0, "an arena holds whole keys")
        return stride(from: 0, to: arena.count, by: byteCount).map { SecretKey(arena: arena, offset: $0) }
    }

    /// Calls `body` with the key bytes.
    /// - Warning: do not let the pointer escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + Self.byteCount])) }
    }

    /// Derives an independent subkey (libsodium `crypto_kdf`, BLAKE2b based).
    ///
    /// - Parameters:
    ///   - subkeyID: distinguishes subkeys within one context.
    ///   - context: exactly 8 ASCII bytes naming the purpose (`"hvlog___"`).
    public func derive(subkeyID: UInt64, context: StaticString) -> SecretKey {
        precondition(context.utf8CodeUnitCount == Int(crypto_kdf_CONTEXTBYTES), "context is 8 bytes")
        let derived = SecureBytes(count: Self.byteCount) { target in
            withUnsafeBytes { master in
                let rc = context.utf8Start.withMemoryRebound(to: CChar.self, capacity: 8) { ctx in
                    crypto_kdf_derive_from_key(
                        target.baseAddress!.assumingMemoryBound(to: UInt8.self), Self.byteCount,
                        subkeyID, ctx, master.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                precondition(rc == 0, "crypto_kdf_derive_from_key rejected valid sizes")
            }
        }
        return SecretKey(storage: derived)
    }
}
