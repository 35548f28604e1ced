import CSodium
import SecureMemory

/// BLAKE2b-256 (libsodium `crypto_generichash`), incrementally. A class: it owns the aligned
/// storage libsodium's opaque state needs, released in `deinit`.
public final class Digest {
    private let raw: UnsafeMutableRawPointer
    private var state: OpaquePointer { OpaquePointer(raw) }
    private var result: [UInt8]?

    public init() {
        Sodium.ensureInitialized()
        raw = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        Sodium.require(crypto_generichash_init(state, nil, 0, 32), "crypto_generichash_init")
    }

    deinit {
        raw.deallocate()
    }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        precondition(result == nil, "Digest.update after finish")
        guard let base = bytes.baseAddress else { return }
        Sodium.require(crypto_generichash_update(state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count)), "crypto_generichash_update")
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The hash; calling it again returns the same value.
    public func finish() -> [UInt8] {
        if let result { return result }
        var out = [UInt8](repeating: 0, count: 32)
        Sodium.require(crypto_generichash_final(state, &out, 32), "crypto_generichash_final")
        result = out
        return out
    }

    /// The hash of `bytes`.
    public static func of(_ bytes: [UInt8]) -> [UInt8] {
        let d = Digest()
        d.update(bytes)
        return d.finish()
    }
}


extension Digest {
    /// The hash of a slice, without copying it.
    public static func of(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let d = Digest()
        bytes.withUnsafeBytes { d.update($0) }
        return d.finish()
    }
}

/// Base64 (standard alphabet, padded) of secrets, through libsodium so that no copy is left in
/// ordinary memory: the callers zero the text buffers.
public enum SecretBase64 {
    public static func encode(_ secret: SecureBytes) -> [UInt8] {
        let length = sodium_base64_encoded_len(secret.count, sodium_base64_VARIANT_ORIGINAL)
        var out = [UInt8](repeating: 0, count: length)
        secret.withUnsafeBytes { s in
            out.withUnsafeMutableBufferPointer { o in
                _ = o.baseAddress!.withMemoryRebound(to: CChar.self, capacity: length) {
                    sodium_bin2base64($0, length, s.baseAddress!.assumingMemoryBound(to: UInt8.self), s.count, sodium_base64_VARIANT_ORIGINAL)
                }
            }
        }
        out.removeLast()  // the terminating NUL
        return out
    }

    /// Decodes `text` into secure memory; nil unless it is exactly `count` bytes of base64.
    public static func decode(_ text: ArraySlice<UInt8>, count: Int) -> SecureBytes? {
        var ok = false
        let secret = SecureBytes(count: count) { out in
            var written = 0
            let rc = text.withUnsafeBytes { t in
                t.baseAddress!.withMemoryRebound(to: CChar.self, capacity: t.count) {
                    sodium_base642bin(out.baseAddress!.assumingMemoryBound(to: UInt8.self), count, $0, t.count,
                                      nil, &written, nil, sodium_base64_VARIANT_ORIGINAL)
                }
            }
            ok = rc == 0 && written == count
        }
        return ok ? secret : nil
    }
}
