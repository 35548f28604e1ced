@testable import EventLog
import SecureMemory
import Testing

@Suite struct KeyslotTests {
    @Test func theRightPassphraseUnwrapsTheMasterKeyAndAWrongOneIsRefused() throws {
        let master = SecretKey.random()
        let vaultID = Sodium.randomBytes(16)
        let slot = try Keyslot.seal(masterKey: master, vaultID: vaultID, passphrase: passphrase("right"), kdf: .minimumForTesting)
        let decoded = try Keyslot.decode(slot.encoded(), path: "keyslot")
        #expect(decoded == slot)
        #expect(try decoded.unlock(passphrase: passphrase("right")).storage.constantTimeEquals(master.storage))
        #expect(throws: EventLogError.wrongPassphrase) { _ = try decoded.unlock(passphrase: passphrase("wrong")) }
        #expect(throws: EventLogError.wrongPassphrase) { _ = try decoded.unlock(passphrase: passphrase("")) }
    }

    @Test func rewrappingKeepsTheKeyAndRetiresTheOldPassphrase() throws {
        let master = SecretKey.random()
        let slot = try Keyslot.seal(masterKey: master, vaultID: Sodium.randomBytes(16), passphrase: passphrase("old"), kdf: .minimumForTesting)
        let new = try slot.rewrapped(from: passphrase("old"), to: passphrase("new"))
        #expect(try new.unlock(passphrase: passphrase("new")).storage.constantTimeEquals(master.storage))
        #expect(throws: EventLogError.wrongPassphrase) { _ = try new.unlock(passphrase: passphrase("old")) }
        #expect(new.salt != slot.salt)
    }

    @Test func aDamagedKeyslotIsReportedAsDamageNotAsAWrongPassphrase() throws {
        let slot = try Keyslot.seal(masterKey: .random(), vaultID: Sodium.randomBytes(16), passphrase: passphrase("p"), kdf: .minimumForTesting)
        let bytes = slot.encoded()
        for bit in stride(from: 64, to: bytes.count * 8, by: 7) {
            var damaged = bytes
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            #expect(throws: EventLogError.keyslotInvalid(path: "ks", reason: "checksum mismatch: the file is damaged")) {
                _ = try Keyslot.decode(damaged, path: "ks")
            }
        }
        #expect { _ = try Keyslot.decode(Array(bytes.prefix(40)), path: "ks") } throws: { "\($0)" == "ks: keyslot invalid (expected 136 bytes, found 40)" }
        #expect(throws: EventLogError.keyslotInvalid(path: "ks", reason: "not a healthvault keyslot")) {
            _ = try Keyslot.decode([UInt8](repeating: 0, count: bytes.count), path: "ks")
        }
    }

    @Test func aCraftedKeyslotCannotDemandUnboundedMemory() throws {
        let slot = try Keyslot.seal(masterKey: .random(), vaultID: Sodium.randomBytes(16), passphrase: passphrase("p"), kdf: .minimumForTesting)
        var bytes = slot.encoded()
        // memLimit lives at bytes 20..<28; set it to 1 TiB and fix the checksum.
        withUnsafeBytes(of: UInt64(1 << 40).littleEndian) { bytes.replaceSubrange(20..<28, with: $0) }
        let crc = bytes.prefix(bytes.count - 4).withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer($0)) }
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
        #expect(throws: EventLogError.keyslotInvalid(path: "ks", reason: "key derivation costs out of bounds")) {
            _ = try Keyslot.decode(bytes, path: "ks")
        }
    }

    @Test func costsThatCouldNotBeReadBackAreRefusedWhenSealing() throws {
        #expect(throws: EventLogError.keyslotInvalid(path: "keyslot", reason: "key derivation costs out of bounds")) {
            _ = try Keyslot.seal(masterKey: .random(), vaultID: Sodium.randomBytes(16), passphrase: passphrase("p"),
                                 kdf: KDFParameters(opsLimit: 3, memLimit: 8 << 30))
        }
    }

    @Test func crc32cMatchesTheStandardCheckValue() {
        let check = Array("123456789".utf8).withUnsafeBytes { CRC32C.checksum($0) }
        #expect(check == 0xE306_9283)
    }
}
