import CSodium

/// One place where libsodium is initialised and its return codes become Swift errors.
enum Sodium {
    /// `sodium_init` is idempotent and thread-safe; calling it from every entry point is cheap.
    static func ensureInitialized() {
        _ = initialized
    }

    private static let initialized: Bool = {
        guard sodium_init() >= 0 else {
            fatalError("libsodium could not be initialised; the process cannot use cryptography")
        }
        return true
    }()

    /// Fills `buffer` with bytes from the operating system's CSPRNG.
    static func randomFill(_ buffer: UnsafeMutableRawBufferPointer) {
        ensureInitialized()
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    /// Random bytes in an ordinary array, for values that are not secret (nonces, salts, ids).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { randomFill($0) }
        return bytes
    }

    /// Constant-time equality of two byte regions of the same length.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }
}
