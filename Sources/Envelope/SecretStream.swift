import BinaryCoding
import CSodium
import SecureMemory

/// Chunked authenticated encryption (libsodium `crypto_secretstream_xchacha20poly1305`): chunks
/// cannot be reordered, dropped or replayed, and the last one carries the FINAL tag, so a
/// stream cut short is detected.
public enum SecretStream {
    public static let keyBytes = Int(crypto_secretstream_xchacha20poly1305_KEYBYTES)
    public static let headerBytes = Int(crypto_secretstream_xchacha20poly1305_HEADERBYTES)
    /// What each chunk adds to its plaintext.
    public static let chunkOverhead = Int(crypto_secretstream_xchacha20poly1305_ABYTES)

    /// A fresh stream key in secure memory.
    public static func generateKey() -> SecureBytes {
        SecureBytes(count: keyBytes) { k in crypto_secretstream_xchacha20poly1305_keygen(k.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Encrypts chunk after chunk. The state holds the stream key: wiped in `deinit`.
    public final class Encryptor {
        private var state = crypto_secretstream_xchacha20poly1305_state()
        /// To be stored before the first chunk.
        public private(set) var header = [UInt8](repeating: 0, count: SecretStream.headerBytes)

        public init(key: SecureBytes) throws {
            guard key.count == SecretStream.keyBytes else { throw EnvelopeError.invalidKey("a stream key has 32 bytes") }
            Sodium.ensureInitialized()
            key.withUnsafeBytes { k in
                Sodium.require(crypto_secretstream_xchacha20poly1305_init_push(&state, &header, k.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                                  "crypto_secretstream_xchacha20poly1305_init_push")
            }
        }

        deinit {
            withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
        }

        /// The ciphertext of one chunk; `final` marks the last.
        public func push(_ plaintext: UnsafeRawBufferPointer, final: Bool) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: plaintext.count + SecretStream.chunkOverhead)
            let tag = UInt8(final ? crypto_secretstream_xchacha20poly1305_TAG_FINAL : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
            Sodium.require(crypto_secretstream_xchacha20poly1305_push(&state, &out, nil, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                                                        UInt64(plaintext.count), nil, 0, tag),
                              "crypto_secretstream_xchacha20poly1305_push")
            return out
        }
    }

    /// Decrypts chunk after chunk; `finished` tells whether the FINAL chunk was seen. The state
    /// holds the stream key: wiped in `deinit`.
    public final class Decryptor {
        private var state = crypto_secretstream_xchacha20poly1305_state()
        public private(set) var finished = false
        private var index = 0

        public init(key: SecureBytes, header: [UInt8]) throws {
            guard key.count == SecretStream.keyBytes, header.count == SecretStream.headerBytes else {
                throw EnvelopeError.invalidKey("malformed stream header")
            }
            Sodium.ensureInitialized()
            let rc = key.withUnsafeBytes { k in
                crypto_secretstream_xchacha20poly1305_init_pull(&state, header, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            guard rc == 0 else { throw EnvelopeError.chunkDamaged(index: 0) }
        }

        deinit {
            withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) }
        }

        /// Opens the next chunk, appending its plaintext to `output`.
        public func pull(_ ciphertext: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
            guard !finished else { throw EnvelopeError.trailingData }
            guard ciphertext.count >= SecretStream.chunkOverhead else { throw EnvelopeError.chunkDamaged(index: index) }
            let start = output.count
            output.appendZeros(ciphertext.count - SecretStream.chunkOverhead)
            var tag: UInt8 = 0
            let rc = output.withUnsafeMutableBufferPointer { out in
                crypto_secretstream_xchacha20poly1305_pull(&state, out.baseAddress! + start, nil, &tag,
                                                           ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                           UInt64(ciphertext.count), nil, 0)
            }
            guard rc == 0 else {
                output.removeLast(output.count - start)
                throw EnvelopeError.chunkDamaged(index: index)
            }
            index += 1
            if tag == UInt8(crypto_secretstream_xchacha20poly1305_TAG_FINAL) { finished = true }
        }
    }
}
