/// A passphrase held in secure memory, never in a Swift `String`.
public struct Passphrase: Sendable {
    package let storage: SecureBytes

    /// Copies the bytes into secure memory; zero the source afterwards (`secureZero`).
    public init(copying bytes: UnsafeRawBufferPointer) {
        storage = SecureBytes(copying: bytes)
    }

    /// Takes the bytes of an array and zeroes the array.
    public init(consuming bytes: inout [UInt8]) {
        storage = bytes.withUnsafeBytes { SecureBytes(copying: $0) }
        secureZero(&bytes)
    }

    /// Number of bytes.
    public var count: Int { storage.count }

    /// Whether the passphrase has no bytes.
    public var isEmpty: Bool { storage.count == 0 }

    /// Constant-time equality, to confirm a passphrase typed twice.
    public func constantTimeEquals(_ other: Passphrase) -> Bool {
        storage.constantTimeEquals(other.storage)
    }
}
