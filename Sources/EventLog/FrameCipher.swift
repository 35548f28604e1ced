import SecureMemory
import CSodium

/// Seals and opens frame payloads (XChaCha20-Poly1305 IETF, random 24-byte nonce per frame, the
/// header as associated data) and computes the chain hash (BLAKE2b-256 over header and ciphertext).
///
/// - Warning: nonces are random per frame; with 192-bit nonces, reuse under one key is negligible
///   for any number of frames a vault will ever write. Never derive a nonce from the sequence
///   number: two writers recovering from the same torn tail would reuse it.
enum FrameCipher {
    /// Encrypts `plaintext` into `output` (which must hold `plaintext.count + tagSize` bytes).
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        key: SecretKey, into output: UnsafeMutableRawBufferPointer
    ) {
        precondition(output.count == plaintext.count + LogFormat.tagSize)
        var written: UInt64 = 0
        let rc = key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_encrypt(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                header.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(header.count),
                nil,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        precondition(rc == 0 && written == UInt64(output.count), "XChaCha20-Poly1305 encryption failed")
    }

    /// Decrypts into `output` (`ciphertext.count - tagSize` bytes); `false` when authentication fails,
    /// in which case `output` holds nothing usable.
    static func open(
        _ ciphertext: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        key: SecretKey, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard ciphertext.count >= LogFormat.tagSize,
              output.count == ciphertext.count - LogFormat.tagSize else { return false }
        var written: UInt64 = 0
        let rc = key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                output.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafeMutablePointer<UInt8>(bitPattern: 1), &written,
                nil,
                ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count),
                header.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(header.count),
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return rc == 0
    }

    /// Decrypts `buffer` (ciphertext followed by its tag) in place; on success its first
    /// `count - tagSize` bytes are the plaintext. On failure the buffer holds nothing usable.
    static func openInPlace(
        _ buffer: UnsafeMutableRawBufferPointer, header: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        key: SecretKey
    ) -> Bool {
        guard buffer.count >= LogFormat.tagSize else { return false }
        var written: UInt64 = 0
        let bytes = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let rc = key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                bytes, &written, nil, bytes, UInt64(buffer.count),
                header.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(header.count),
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return rc == 0
    }

    /// The chain link of a frame: BLAKE2b-256(header ‖ ciphertext). The next frame's header
    /// carries it, so removing, reordering or replacing any frame breaks every later link.
    static func chainHash(header: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer) -> [UInt8] {
        // The state is a 64-byte aligned C struct that Swift imports as opaque.
        let raw = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        defer { raw.deallocate() }
        let state = OpaquePointer(raw)
        var hash = [UInt8](repeating: 0, count: LogFormat.hashSize)
        crypto_generichash_init(state, nil, 0, LogFormat.hashSize)
        crypto_generichash_update(state, header.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(header.count))
        if ciphertext.count > 0 {
            crypto_generichash_update(state, ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count))
        }
        crypto_generichash_final(state, &hash, LogFormat.hashSize)
        return hash
    }

    /// The "previous hash" of frame #1: bound to the vault id so that logs cannot be swapped.
    static func genesisHash(vaultID: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialized()
        let input = LogFormat.genesisLabel + vaultID
        var hash = [UInt8](repeating: 0, count: LogFormat.hashSize)
        crypto_generichash(&hash, LogFormat.hashSize, input, UInt64(input.count), nil, 0)
        return hash
    }

    /// Keyed BLAKE2b-256, for records (the head) that must not be forged without the master key.
    static func mac(_ message: [UInt8], key: SecretKey) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: LogFormat.hashSize)
        key.withUnsafeBytes { k in
            _ = crypto_generichash(&out, LogFormat.hashSize, message, UInt64(message.count),
                                   k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
        }
        return out
    }

    /// BLAKE2b-256 of `bytes`, unkeyed: the key table's digest in the head record.
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: LogFormat.hashSize)
        _ = crypto_generichash(&out, LogFormat.hashSize, bytes, UInt64(bytes.count), nil, 0)
        return out
    }
}
