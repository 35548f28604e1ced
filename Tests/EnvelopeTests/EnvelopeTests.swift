import Envelope
import SecureMemory
import Testing

/// The libsodium wrappers against published test vectors, and their refusals.
@Suite struct EnvelopeTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    static func secure(_ bytes: [UInt8]) -> SecureBytes {
        bytes.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    @Test func blake2b256MatchesItsReferenceValues() {
        #expect(Digest.of([]).hex == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
        #expect(Digest.of(Array("abc".utf8)).hex == "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
        // Incremental updates give the same hash as one.
        let d = Digest()
        d.update(Array("a".utf8))
        d.update(Array("bc".utf8))
        #expect(d.finish() == Digest.of(Array("abc".utf8)) && d.finish() == d.finish())
    }

    @Test func ed25519SignsAsRFC8032TestOneSays() throws {
        let pair = try SigningKeyPair(seed: Self.secure(Self.bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")))
        #expect(pair.publicKey == Self.bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        let signature = pair.sign([])
        #expect(signature == Self.bytes("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"))
        #expect(SigningKeyPair.verify(signature, of: [], publicKey: pair.publicKey))
        #expect(!SigningKeyPair.verify(signature, of: [0], publicKey: pair.publicKey))
        var flipped = signature
        flipped[5] ^= 1
        #expect(!SigningKeyPair.verify(flipped, of: [], publicKey: pair.publicKey))
        #expect(!SigningKeyPair.verify(Array(signature.prefix(63)), of: [], publicKey: pair.publicKey))
        #expect(throws: EnvelopeError.invalidKey("an Ed25519 seed has 32 bytes")) { try SigningKeyPair(seed: Self.secure([1, 2, 3])) }
    }

    @Test func x25519DerivesTheRFC7748PublicKey() throws {
        let alice = try BoxKeyPair(secretKey: Self.secure(Self.bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")))
        #expect(alice.publicKey == Self.bytes("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(throws: EnvelopeError.invalidKey("an X25519 secret key has 32 bytes")) { try BoxKeyPair(secretKey: Self.secure([0])) }
    }

    @Test func aSealedBoxOpensOnlyForItsRecipient() throws {
        let recipient = BoxKeyPair.generate(), other = BoxKeyPair.generate()
        let secret = SecretStream.generateKey()
        let sealed = try BoxKeyPair.seal(secret, to: recipient.publicKey)
        #expect(sealed.count == SecretStream.keyBytes + BoxKeyPair.sealOverhead)
        #expect(try recipient.open(sealed).constantTimeEquals(secret))
        #expect(throws: EnvelopeError.notForThisKey) { try other.open(sealed) }
        var tampered = sealed
        tampered[40] ^= 0x80
        #expect(throws: EnvelopeError.notForThisKey) { try recipient.open(tampered) }
        #expect(throws: EnvelopeError.notForThisKey) { try recipient.open(Array(sealed.prefix(BoxKeyPair.sealOverhead))) }
        #expect(throws: EnvelopeError.invalidKey("an X25519 public key has 32 bytes")) { try BoxKeyPair.seal(secret, to: [1, 2]) }
    }

    @Test func aSecretStreamDetectsChangedMissingAndTrailingChunks() throws {
        let key = SecretStream.generateKey()
        let encryptor = try SecretStream.Encryptor(key: key)
        let chunks = [Array("first".utf8), Array("second".utf8), Array("last".utf8)]
        let sealed = chunks.enumerated().map { i, c in c.withUnsafeBytes { encryptor.push($0, final: i == chunks.count - 1) } }

        func open(_ parts: [[UInt8]]) throws -> (String, Bool) {
            let decryptor = try SecretStream.Decryptor(key: key, header: encryptor.header)
            var out: [UInt8] = []
            for part in parts { try part.withUnsafeBytes { try decryptor.pull($0, into: &out) } }
            return (String(decoding: out, as: UTF8.self), decryptor.finished)
        }
        #expect(try open(sealed) == ("firstsecondlast", true))
        #expect(try open(Array(sealed.prefix(2))) == ("firstsecond", false))
        #expect(throws: EnvelopeError.chunkDamaged(index: 1)) { try open([sealed[0], sealed[2]]) }
        var flipped = sealed
        flipped[1][3] ^= 1
        #expect(throws: EnvelopeError.chunkDamaged(index: 1)) { try open(flipped) }
        #expect(throws: EnvelopeError.trailingData) { try open(sealed + [sealed[2]]) }
        #expect(throws: EnvelopeError.chunkDamaged(index: 0)) { try open([Array(sealed[0].prefix(3))]) }
    }

    @Test func secretBase64RoundTripsAndRefusesOtherLengths() {
        let secret = Self.secure(Array(0..<32))
        let text = SecretBase64.encode(secret)
        #expect(String(decoding: text, as: UTF8.self) == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
        #expect(SecretBase64.decode(text[...], count: 32)?.constantTimeEquals(secret) == true)
        #expect(SecretBase64.decode(text[...], count: 31) == nil)
        #expect(SecretBase64.decode(Array("not base64!".utf8)[...], count: 32) == nil)
    }
}
