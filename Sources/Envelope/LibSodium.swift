import CSodium

/// The one place where libsodium's return codes become Swift behaviour (as swift-system turns
/// errno into errors in one place).
///
/// Calls that fail only when the library is broken or misused (key generation, signing,
/// hashing, a stream push within its size limit) stop the program: carrying on would hand out
/// zeroed keys, signatures or ciphertext. Calls whose failure depends on their input (opening,
/// verifying, a point that is not on the curve) are checked where they are made and throw.
enum LibSodium {
    /// `sodium_init`: 0 the first time, 1 when done already, -1 when the library cannot run.
    static func initialize() {
        let rc = sodium_init()
        precondition(rc >= 0, "libsodium could not initialise (sodium_init returned \(rc))")
    }

    /// Stops the program unless `rc` is 0.
    static func require(_ rc: Int32, _ call: StaticString) {
        precondition(rc == 0, "libsodium \(call) failed (returned \(rc))")
    }
}
