import BinaryCoding
@testable import EventLog
import Foundation
@testable import Importers
@testable import Vault
import Testing
import TestSupport
import VaultTestSupport
import ZIPFoundation

/// The export XML streams from the zip through our own reader (`ZipEntryStream`): it finds the
/// entry's data from the zip's headers (zip64 too), hands over exactly the contents, refuses
/// damaged DEFLATE naming the entry, and leaves what it cannot place to ZIPFoundation.
@Suite struct ZipEntryStreamTests {
    /// 60 KB of text that compresses but is not one repeated byte.
    static let contents = Data((0..<3_000).map { "<Record value=\"\($0 * 7919 % 10_007)\"/>\n" }.joined().utf8)

    static func crc(_ data: Data) -> UInt32 {
        var checksum = ZipChecksum()
        checksum.add(data)
        return checksum.value
    }

    /// A zip of one entry written by hand: `compressed` stored under `method`, the CRC and size
    /// of `contents`; with `zip64`, the sizes only in zip64 fields and the directory's place
    /// only in the zip64 end records (as a zip of a decade's export over 4 GB has them). The
    /// local header's offset, 0, stays in 32 bits: ZIPFoundation 0.9 takes a zip64 offset of 0
    /// for an absent one (`effectiveRelativeOffsetOfLocalHeader`) and would not list the entry.
    static func handMadeZip(name: String, compressed: [UInt8], method: UInt16, contents: Data, zip64: Bool) -> Data {
        let nameBytes = Array(name.utf8)
        let crc = Self.crc(contents)
        let size = UInt64(contents.count), packed = UInt64(compressed.count)
        var w = ByteWriter()
        // Local header.
        w.write(UInt32(0x0403_4B50)); w.write(UInt16(45)); w.write(UInt16(0x0800)); w.write(method)
        w.write(UInt16(0)); w.write(UInt16(0x21)); w.write(crc)
        w.write(zip64 ? UInt32.max : UInt32(packed)); w.write(zip64 ? UInt32.max : UInt32(size))
        w.write(UInt16(nameBytes.count)); w.write(UInt16(zip64 ? 20 : 0)); w.write(nameBytes)
        if zip64 { w.write(UInt16(1)); w.write(UInt16(16)); w.write(size); w.write(packed) }
        w.write(compressed)
        // Central directory record.
        let directoryOffset = UInt64(w.bytes.count)
        w.write(UInt32(0x0201_4B50)); w.write(UInt16(0x032D)); w.write(UInt16(45)); w.write(UInt16(0x0800)); w.write(method)
        w.write(UInt16(0)); w.write(UInt16(0x21)); w.write(crc)
        w.write(zip64 ? UInt32.max : UInt32(packed)); w.write(zip64 ? UInt32.max : UInt32(size))
        w.write(UInt16(nameBytes.count)); w.write(UInt16(zip64 ? 20 : 0)); w.write(UInt16(0)); w.write(UInt16(0)); w.write(UInt16(0))
        w.write(UInt32(0o100644) << 16); w.write(UInt32(0)); w.write(nameBytes)
        if zip64 { w.write(UInt16(1)); w.write(UInt16(16)); w.write(size); w.write(packed) }
        let directorySize = UInt64(w.bytes.count) - directoryOffset
        if zip64 {
            let recordOffset = UInt64(w.bytes.count)
            w.write(UInt32(0x0606_4B50)); w.write(UInt64(44)); w.write(UInt16(45)); w.write(UInt16(45)); w.write(UInt32(0)); w.write(UInt32(0))
            w.write(UInt64(1)); w.write(UInt64(1)); w.write(directorySize); w.write(directoryOffset)
            w.write(UInt32(0x0706_4B50)); w.write(UInt32(0)); w.write(recordOffset); w.write(UInt32(1))
        }
        w.write(UInt32(0x0605_4B50)); w.write(UInt16(0)); w.write(UInt16(0))
        w.write(zip64 ? UInt16.max : UInt16(1)); w.write(zip64 ? UInt16.max : UInt16(1))
        w.write(zip64 ? UInt32.max : UInt32(directorySize)); w.write(zip64 ? UInt32.max : UInt32(directoryOffset)); w.write(UInt16(0))
        return Data(w.bytes)
    }

    static func deflated(_ data: Data) -> [UInt8] {
        data.withUnsafeBytes { Deflater()!.deflate($0)! }
    }

    /// What the stream hands over for the only entry of the zip at `path`, and its chunks' sizes.
    static func read(_ path: String, chunkSize: Int) throws -> (data: Data, chunks: [Int])? {
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        guard let entry = archive.makeIterator().next(), let stream = ZipEntryStream(entry: entry, inZipAt: path) else { return nil }
        var data = Data(), chunks: [Int] = []
        try stream.read(chunkSize: chunkSize, name: "zip:entry") {
            data.append($0)
            chunks.append($0.count)
        }
        return (data, chunks)
    }

    @Test func deflatedAndStoredEntriesStreamWholeInChunks() throws {
        let dir = TemporaryDirectory()
        for method in [CompressionMethod.deflate, .none] {
            let path = dir.path + "/\(method).zip"
            let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
            try archive.addEntry(with: "apple_health_export/export.xml", type: .file, uncompressedSize: Int64(Self.contents.count),
                                 compressionMethod: method) { position, size in Self.contents.subdata(in: Int(position)..<Int(position) + size) }
            let read = try #require(try Self.read(path, chunkSize: 4096))
            #expect(read.data == Self.contents)
            #expect(read.chunks.count == (Self.contents.count + 4095) / 4096 && read.chunks.dropLast().allSatisfy { $0 == 4096 })
        }
    }

    @Test func aZip64EntryIsPlacedFromItsZip64Fields() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/zip64.zip"
        try Self.handMadeZip(name: "apple_health_export/export.xml", compressed: Self.deflated(Self.contents), method: 8,
                             contents: Self.contents, zip64: true).write(to: URL(fileURLWithPath: path))
        let read = try #require(try Self.read(path, chunkSize: 1 << 20))
        #expect(read.data == Self.contents && read.chunks == [Self.contents.count])
    }

    @Test func damagedOrCutDeflateIsRefusedNamingTheEntry() throws {
        let dir = TemporaryDirectory()
        let valid = Self.deflated(Self.contents)
        let cases: [(compressed: [UInt8], reason: String)] = [
            // 0xFF: a final block of the reserved type 3.
            ([UInt8](repeating: 0xFF, count: 64), "the zip entry's compressed data is not valid DEFLATE (the zip is damaged)"),
            (Array(valid.prefix(valid.count / 2)), "the zip entry's compressed data ends before its stream does (the zip is damaged)"),
        ]
        for (index, bad) in cases.enumerated() {
            let path = dir.path + "/bad\(index).zip"
            try Self.handMadeZip(name: "export.xml", compressed: bad.compressed, method: 8, contents: Self.contents, zip64: false)
                .write(to: URL(fileURLWithPath: path))
            #expect(throws: ImportError.unreadable(path: "zip:entry", reason: bad.reason)) { _ = try Self.read(path, chunkSize: 4096) }
        }
    }

    @Test func anEntryOfAnotherMethodIsLeftToZIPFoundation() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/bzip2.zip"
        try Self.handMadeZip(name: "export.xml", compressed: Array(Self.contents), method: 12, contents: Self.contents, zip64: false)
            .write(to: URL(fileURLWithPath: path))
        #expect(try Self.read(path, chunkSize: 4096) == nil)
    }

    /// The whole import reads an export from a zip64 zip.
    @Test func anExportInAZip64ZipImports() throws {
        let t = try ImportTestVault()
        let xml = Data(export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500")).utf8)
        let path = t.dir.path + "/export64.zip"
        try Self.handMadeZip(name: "apple_health_export/export.xml", compressed: Self.deflated(xml), method: 8, contents: xml, zip64: true)
            .write(to: URL(fileURLWithPath: path))
        #expect(try t.vault.importFiles([path]).added == 1)
    }

    /// Mutated zips (their headers and directory above all, which this reader parses) never
    /// crash the import; a refused one names the file and leaves the log as it was. CI runs a
    /// bounded number; `FUZZ_ITERATIONS=N make test` runs more.
    @Test func mutatedZipsNeverCrashAndFailedImportsChangeNothing() throws {
        let t = try ImportTestVault()
        let records = (0..<40).map { stepRecord("2024-01-01 10:\(10 + $0):00 +0100", "2024-01-01 10:\(10 + $0):30 +0100", "\(500 + $0)") }
        let good = try t.zip("good.zip", [("apple_health_export/export.xml", export(records.joined(separator: "\n")))])
        let seed = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        var rng = SeededRandom(seed: ImportFuzzTests.seed)
        var outcomes: [String: Int] = [:]
        for i in 0..<ImportFuzzTests.iterations / 2 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                // Half the mutations in the local header or the directory and end record.
                let region = Int.random(in: 0..<4, using: &rng)
                let at = region == 0 ? Int.random(in: 0..<min(80, bytes.count), using: &rng)
                    : region == 1 ? Int.random(in: max(0, bytes.count - 140)..<bytes.count, using: &rng)
                    : Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes[at] = [0x00, 0xFF, 0x50, 0x4B][Int.random(in: 0..<4, using: &rng)]
                case 2: bytes = Array(bytes.prefix(at))
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &rng)))
                }
                if bytes.isEmpty { break }
            }
            try ImportFuzzTests.importMutated(bytes, as: t.dir.path + "/fuzz-\(i).zip", into: t, outcomes: &outcomes, context: "zip #\(i)")
        }
        #expect(try Vault.verify(at: t.path, passphrase: passphrase("p")).isOK)
        #expect(outcomes["imported", default: 0] > 0 && outcomes["refused", default: 0] > 0, "\(outcomes)")
    }
}
