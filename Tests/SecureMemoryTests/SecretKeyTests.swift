import SecureMemory
import Testing

/// Keys in secure memory: derivation against BLAKE2b computed outside libsodium, arenas, and
/// passphrases that leave nothing behind in ordinary memory.
@Suite struct SecretKeyTests {
    static func key(_ bytes: [UInt8]) -> SecretKey {
        SecretKey(bytes.withUnsafeBytes { SecureBytes(copying: $0) })
    }

    static func bytes(of key: SecretKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    /// `crypto_kdf_derive_from_key` is BLAKE2b-256 keyed with the master key, the subkey id as
    /// the salt's first eight bytes (little-endian) and the context as the personalisation. The
    /// expected values come from Python's `hashlib.blake2b(key=, salt=, person=)`: the log's key,
    /// the keyslot's and every file's seal keep opening only while this holds.
    @Test func derivationMatchesBlake2bComputedIndependently() {
        let master = Self.key(Array(0...31))
        #expect(Self.bytes(of: master.derive(subkeyID: 1, context: "hvlog___")).hex
                == "65ebac0f5c91e5f86ec6a0c3b2edf558ff235897768e3c944317658d152767d4")
        #expect(Self.bytes(of: master.derive(subkeyID: 0, context: "hvlog___")).hex
                == "b95811b240ac2a349e214a479c8d9b51f4bba41676fcfeb893de8b0eeb2687f7")
        #expect(Self.bytes(of: master.derive(subkeyID: 7, context: "testctx1")).hex
                == "e39c45cad6508db90a7e69edf7e612972313d1113c073d144331901192a3c186")
    }

    /// An arena's keys are its 32-byte slices, in order, and a derivation from one of them is the
    /// derivation from the same bytes held alone.
    @Test func anArenaHoldsItsKeysEndToEnd() {
        let raw = Array(0..<96).map { UInt8($0 * 7 % 251) }
        let arena = raw.withUnsafeBytes { SecureBytes(copying: $0) }
        let keys = SecretKey.keys(in: arena)
        #expect(keys.count == 3)
        #expect(keys.map(Self.bytes(of:)) == [Array(raw[0..<32]), Array(raw[32..<64]), Array(raw[64..<96])])
        let alone = Self.key(Array(raw[32..<64]))
        #expect(Self.bytes(of: keys[1].derive(subkeyID: 3, context: "hvlog___")) == Self.bytes(of: alone.derive(subkeyID: 3, context: "hvlog___")))
    }

    @Test func randomKeysDifferAndHaveTheirLength() {
        let keys = (0..<8).map { _ in Self.bytes(of: SecretKey.random()) }
        #expect(keys.allSatisfy { $0.count == SecretKey.byteCount })
        #expect(Set(keys).count == 8)
    }

    /// A passphrase taken from an array zeroes the array; equality is by content.
    @Test func aConsumedPassphraseLeavesItsSourceZeroed() {
        var typed = Array("correct horse".utf8)
        let first = Passphrase(consuming: &typed)
        #expect(typed == [UInt8](repeating: 0, count: 13))
        #expect(first.count == 13 && !first.isEmpty)
        var again = Array("correct horse".utf8)
        var other = Array("correct horsE".utf8)
        var shorter = Array("correct hors".utf8)
        #expect(first.constantTimeEquals(Passphrase(consuming: &again)))
        #expect(!first.constantTimeEquals(Passphrase(consuming: &other)))
        #expect(!first.constantTimeEquals(Passphrase(consuming: &shorter)))
        var empty: [UInt8] = []
        #expect(Passphrase(consuming: &empty).isEmpty)
    }

    /// A failed initialisation frees what it allocated (no double free, no crash), and the error
    /// reaches the caller.
    @Test func aThrowingInitialiserPassesItsErrorOn() {
        struct Refused: Error, Equatable {}
        #expect(throws: Refused()) {
            _ = try SecureBytes(count: 32) { buffer in
                buffer.storeBytes(of: 0xFF, as: UInt8.self)
                throw Refused()
            }
        }
        let empty = [UInt8]().withUnsafeBytes { SecureBytes(copying: $0) }
        #expect(empty.count == 0 && empty.constantTimeEquals(empty))
    }

    @Test func hexIsLowercaseAndTwoDigitsAByte() {
        #expect([0x00, 0x0F, 0xA0, 0xFF].hex == "000fa0ff")
        #expect([UInt8]().hex == "")
        #expect(RandomBytes.make(24).count == 24)
    }
}
