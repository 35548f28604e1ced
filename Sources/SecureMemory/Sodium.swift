import CSodium

/// The one place where libsodium is initialised and its return codes become Swift behaviour (as
/// swift-system turns errno into errors in one place), for every target that calls it.
///
/// Calls that fail only when the library is broken or misused (key generation, signing,
/// hashing, a stream push within its size limit) stop the program through `require`: carrying
/// on would hand out zeroed keys, signatures or ciphertext. Calls whose failure depends on their
/// input (opening, verifying, a point that is not on the curve) are checked where they are made
/// and throw.
package enum Sodium {
    /// `sodium_init` is idempotent and thread-safe; calling it from every entry point is cheap.
    package static func ensureInitialized() {
        _ = initialized
    }

    private static let initialized: Bool = {
        guard sodium_init() >= 0 else {
            fatalError("libsodium could not be initialised; the process cannot use cryptography")
        }
        return true
    }()

    /// Stops the program unless `rc` is 0.
    package static func require(_ rc: Int32, _ call: StaticString) {
        precondition(rc == 0, "libsodium \(call) failed (returned \(rc))")
    }

    /// Fills `buffer` with bytes from the operating system's CSPRNG.
    package static func randomFill(_ buffer: UnsafeMutableRawBufferPointer) {
        ensureInitialized()
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    /// Random bytes in an ordinary array, for values that are not secret (nonces, salts, ids).
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randomFill($0) }
        return bytes
    }

    /// Constant-time equality of two byte regions of the same length.
    package static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }
}
