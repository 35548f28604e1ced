import BinaryCoding
import Testing

/// The stored hashes and the seeded generator against values computed outside this code base
/// (FNV-1a's published test values; SplitMix64's reference outputs, which Python's plain
/// rendition of the algorithm gives too): a change to either would make stored digests and
/// generated exports differ from what earlier builds wrote.
@Suite struct StableHashTests {
    @Test func fnv1aGivesThePublishedValues() {
        #expect(FNV1a.hash([UInt8]()) == 0xCBF2_9CE4_8422_2325)
        #expect(FNV1a.hash(Array("a".utf8)) == 0xAF63_DC4C_8601_EC8C)
        #expect(FNV1a.hash(Array("foobar".utf8)) == 0x8594_4171_F739_67E8)
        // Adding in pieces is adding the whole; a word is its eight little-endian bytes.
        var pieces = FNV1a()
        pieces.add(Array("foo".utf8))
        pieces.add(Array("bar".utf8))
        #expect(pieces.value == FNV1a.hash(Array("foobar".utf8)))
        var word = FNV1a()
        word.add(littleEndian: 0x0807_0605_0403_0201)
        #expect(word.value == FNV1a.hash([1, 2, 3, 4, 5, 6, 7, 8]))
    }

    @Test func splitMix64GivesTheReferenceSequence() {
        var zero = SplitMix64(seed: 0)
        #expect([zero.next(), zero.next(), zero.next()] == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
        var other = SplitMix64(seed: 1_234_567)
        #expect([other.next(), other.next()] == [0x599E_D017_FB08_FC85, 0x2C73_F084_5854_0FA5])
        var bounded = SplitMix64(seed: 0)
        #expect(bounded.next(1_000) == Int(UInt64(0xE220_A839_7B1D_CDAF) % 1_000))
        #expect(SplitMix64.mix(SplitMix64.increment) == 0xE220_A839_7B1D_CDAF)
    }

    /// The import's table hash: the same bytes and seed give the same value; every length from 0
    /// to 24 (whole words and every tail) gives a different one, trailing zeros included; and a
    /// different seed changes it.
    @Test func wordHashSeparatesLengthsTailsAndSeeds() {
        func hash(_ bytes: [UInt8], seed: UInt64 = 42) -> UInt64 { bytes.withUnsafeBytes { WordHash.hash($0, seed: seed) } }
        let zeros = (0...24).map { hash([UInt8](repeating: 0, count: $0)) }
        #expect(Set(zeros).count == 25)
        let text = Array("HKQuantityTypeIdentifierStepCount".utf8)
        #expect(hash(text) == hash(text))
        #expect(hash(text) != hash(text, seed: 43))
        // One bit changed anywhere, in a whole word or in the tail, changes the hash.
        let flipped = text.indices.map { i -> UInt64 in
            var copy = text
            copy[i] ^= 1
            return hash(copy)
        }
        #expect(Set(flipped + [hash(text)]).count == text.count + 1)
    }
}
