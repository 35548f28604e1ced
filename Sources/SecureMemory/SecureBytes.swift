import CSodium

/// Secret bytes in `sodium_malloc`'d memory: guard pages around them, never swapped where the
/// system allows it, and zeroed before the memory is released.
///
/// Bytes are reachable only through `withUnsafeBytes`, as with swift-crypto's `SymmetricKey`.
/// Instances are immutable once built, so they can be shared across threads.
public final class SecureBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    /// The number of secret bytes.
    public let count: Int

    /// Allocates `count` bytes and lets `initialize` fill them; the closure's buffer is the only
    /// writable view the storage ever gives out.
    public init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        Sodium.ensureInitialized()
        guard let raw = sodium_malloc(Swift.max(count, 1)) else {
            fatalError("sodium_malloc failed: out of memory for \(count) secret bytes")
        }
        self.pointer = raw
        self.count = count
        // Every stored property is set: if `initialize` throws, Swift runs `deinit`, which zeroes
        // and frees the memory (freeing it here as well would free it twice).
        try initialize(UnsafeMutableRawBufferPointer(start: raw, count: count))
    }

    /// Fresh random secret bytes from the system's CSPRNG.
    public convenience init(randomCount count: Int) {
        self.init(count: count) { Sodium.randomFill($0) }
    }

    /// Copies `bytes` into secure memory. The caller remains responsible for zeroing its copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { target in
            if bytes.count > 0 { target.copyMemory(from: bytes) }
        }
    }

    deinit {
        // sodium_free does not promise to zero on every platform; do it explicitly.
        sodium_memzero(pointer, Swift.max(count, 1))
        sodium_free(pointer)
    }

    /// Calls `body` with a read-only view of the secret bytes.
    /// - Warning: do not let the pointer escape, and do not copy it into ordinary memory.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison, so that equality checks do not leak how many bytes matched.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        withUnsafeBytes { a in other.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }
}

/// Zeroes an ordinary array that briefly held secret bytes (a passphrase read from a file).
public func secureZero(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }
}

/// Zeroes memory this program does not own as an array (the environment block) in a way the
/// compiler cannot drop.
public func secureZero(_ pointer: UnsafeMutableRawPointer, count: Int) {
    if count > 0 { sodium_memzero(pointer, count) }
}
