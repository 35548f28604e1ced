import BinaryCoding
import CZlibSystem
import Foundation
import ZIPFoundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One zip entry's contents, inflated as they stream from the file, each chunk in memory of its
/// own handed over whole (`Data` that frees it).
///
/// ZIPFoundation's `extract` zero-fills a fresh `Data` for every chunk it inflates (`calloc` of a
/// mebibyte: 3 % of a one-year import's instructions went to the zeroing, on the inflating
/// thread, docs/benchmarks-history.md); here the chunks are `malloc`'s, written once by zlib. Only the
/// export XML comes this way; routes, ECGs and clinical records (small files) stay with
/// ZIPFoundation, which also finds the entry: where its data starts it keeps to itself, so it
/// is read here from the zip's central directory and the entry's local header (zip64 records
/// and fields included). An entry these do not place exactly as ZIPFoundation listed it (a
/// name that is not the same bytes, sizes or CRC that differ, a method other than stored or
/// deflated) makes `init` return nil, and the caller reads it with ZIPFoundation.
///
/// The CRC-32 and the inflation limit are the caller's (`ZipChecksum`, `InflationLimit`), as
/// for ZIPFoundation's chunks.
struct ZipEntryStream {
    let zipPath: String
    /// Where the entry's compressed bytes start in the file, and how many there are.
    let dataOffset: UInt64
    let compressedSize: UInt64
    /// Deflated (method 8), else stored (method 0).
    let deflated: Bool

    /// Compressed bytes read at a time.
    static let inputSize = 256 << 10
    /// Central directories larger than this are left to ZIPFoundation (a decade's export zip
    /// holds ~100 KB of it).
    static let maximumDirectoryBytes: UInt64 = 64 << 20

    /// Places `entry` (as ZIPFoundation listed it from the zip at `zipPath`); nil when it cannot.
    init?(entry: Entry, inZipAt zipPath: String) {
        guard let file = try? ZipFile(path: zipPath), let located = file.locate(entry) else { return nil }
        self.zipPath = zipPath
        dataOffset = located.dataOffset
        compressedSize = located.compressedSize
        deflated = located.deflated
    }

    /// Hands the entry's contents to `consume` in chunks of at most `chunkSize` bytes; errors
    /// name the entry `name`.
    func read(chunkSize: Int, name: String, _ consume: (Data) throws -> Void) throws {
        let file = try ZipFile(path: zipPath, name: name)
        var input = CompressedInput(file: file, offset: dataOffset, remaining: compressedSize, name: name)
        if deflated {
            try inflate(&input, chunkSize: chunkSize, name: name, consume)
        } else {
            while input.remaining > 0 {
                let count = Int(min(UInt64(chunkSize), input.remaining))
                let chunk = malloc(count)!
                do {
                    try input.read(into: chunk, count: count)
                } catch {
                    free(chunk)
                    throw error
                }
                try consume(Data(bytesNoCopy: chunk, count: count, deallocator: .free))
            }
        }
    }

    private func inflate(_ input: inout CompressedInput, chunkSize: Int, name: String, _ consume: (Data) throws -> Void) throws {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ImportError.unreadable(path: name, reason: "zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.inputSize, alignment: 16)
        defer { buffer.deallocate() }
        var chunk = malloc(chunkSize)!
        defer { free(chunk) }
        stream.next_out = chunk.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(chunkSize)
        while true {
            if stream.avail_in == 0, input.remaining > 0 {
                let count = Int(min(UInt64(Self.inputSize), input.remaining))
                try input.read(into: buffer, count: count)
                stream.next_in = buffer.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(count)
            }
            let result = CZlibSystem.inflate(&stream, Z_NO_FLUSH)
            let produced = chunkSize - Int(stream.avail_out)
            if stream.avail_out == 0 || (result == Z_STREAM_END && produced > 0) {
                let full = chunk
                chunk = malloc(chunkSize)!
                stream.next_out = chunk.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(chunkSize)
                try consume(Data(bytesNoCopy: full, count: produced, deallocator: .free))
            }
            switch result {
            case Z_STREAM_END:
                return
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.avail_in == 0 && input.remaining == 0:
                throw ImportError.unreadable(path: name, reason: "the zip entry's compressed data ends before its stream does (the zip is damaged)")
            case Z_BUF_ERROR:
                continue
            default:
                throw ImportError.unreadable(path: name, reason: "the zip entry's compressed data is not valid DEFLATE (the zip is damaged)")
            }
        }
    }
}

/// The compressed bytes of an entry, read from the file in order.
private struct CompressedInput {
    let file: ZipFile
    var offset: UInt64
    var remaining: UInt64
    let name: String

    mutating func read(into buffer: UnsafeMutableRawPointer, count: Int) throws {
        guard try file.read(into: buffer, count: count, at: offset) == count else {
            throw ImportError.unreadable(path: name, reason: "the zip ends inside the entry's data (the zip is truncated)")
        }
        offset += UInt64(count)
        remaining -= UInt64(count)
    }
}

/// A zip file open for reading at offsets, and the few records `ZipEntryStream` needs from it.
private final class ZipFile {
    let descriptor: Int32
    let size: UInt64

    init(path: String, name: String? = nil) throws {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ImportError.unreadable(path: name ?? path, reason: "the zip cannot be opened (\(String(cString: strerror(errno))))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            throw ImportError.unreadable(path: name ?? path, reason: "the zip cannot be read (\(String(cString: strerror(errno))))")
        }
        size = UInt64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Reads up to `count` bytes at `offset`; fewer only at the file's end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: UInt64) throws -> Int {
        var done = 0
        while done < count {
            let n = pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw ImportError.unreadable(path: "zip", reason: "read failed (\(String(cString: strerror(errno))))")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func bytes(at offset: UInt64, count: Int) -> [UInt8]? {
        guard count >= 0, offset <= size, UInt64(count) <= size - offset else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        let read = out.withUnsafeMutableBytes { (try? self.read(into: $0.baseAddress!, count: count, at: offset)) ?? -1 }
        return read == count ? out : nil
    }

    /// The `count` bytes of a record at `offset` whose first four are `signature`, read by
    /// `read` after them; nil when they are not there or `read` finds them short.
    private func readRecord<T>(at offset: UInt64, count: Int, signature: UInt32, _ read: (inout ByteReader) -> T?) -> T? {
        guard let record = bytes(at: offset, count: count) else { return nil }
        return record.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            guard reader.read(UInt32.self) == signature else { return nil }
            return read(&reader)
        }
    }

    /// Where `entry`'s data starts, from the central directory record with its name, sizes and
    /// CRC, and its local header; nil when they do not place it.
    func locate(_ entry: Entry) -> (dataOffset: UInt64, compressedSize: UInt64, deflated: Bool)? {
        guard let directory = centralDirectory() else { return nil }
        let wanted = Array(entry.path.utf8)
        let found: DirectoryRecord? = directory.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            while reader.remaining > 0 {
                guard let record = DirectoryRecord(&reader) else { return nil }
                if record.name.elementsEqual(wanted) { return record }
            }
            return nil
        }
        guard let record = found, record.method == 0 || record.method == 8, record.compressed == entry.compressedSize,
              record.uncompressed == entry.uncompressedSize, record.crc == entry.checksum,
              let (name, extra) = readRecord(at: record.localHeader, count: 30, signature: 0x0403_4B50, { reader -> (UInt16, UInt16)? in
                  reader.skip(22)
                  guard let name = reader.read(UInt16.self), let extra = reader.read(UInt16.self) else { return nil }
                  return (name, extra)
              }) else { return nil }
        let start = record.localHeader + 30 + UInt64(name) + UInt64(extra)
        guard start <= size, record.compressed <= size - start else { return nil }
        return (start, record.compressed, record.method == 8)
    }

    /// The central directory's bytes, found from the end-of-central-directory record (and its
    /// zip64 form when the zip has one).
    private func centralDirectory() -> [UInt8]? {
        let tailCount = Int(min(size, 22 + 65_535))
        guard tailCount >= 22, let tail = bytes(at: size - UInt64(tailCount), count: tailCount) else { return nil }
        // The last record with the signature: a comment may follow it, up to 65,535 bytes.
        guard let end = stride(from: tailCount - 22, through: 0, by: -1).first(where: {
            tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 0x05 && tail[$0 + 3] == 0x06
        }) else { return nil }
        let fields: (entries: UInt16, count: UInt32, offset: UInt32)? = tail.withUnsafeBytes { raw in
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[end...]))
            reader.skip(10)
            guard let entries = reader.read(UInt16.self), let count = reader.read(UInt32.self), let offset = reader.read(UInt32.self) else { return nil }
            return (entries, count, offset)
        }
        guard let fields else { return nil }
        var offset = UInt64(fields.offset), count = UInt64(fields.count)
        if fields.offset == 0xFFFF_FFFF || fields.count == 0xFFFF_FFFF || fields.entries == 0xFFFF {
            // Zip64: a locator just before names the zip64 end record, which holds the real values.
            let endPosition = size - UInt64(tailCount) + UInt64(end)
            guard endPosition >= 20,
                  let recordOffset = readRecord(at: endPosition - 20, count: 20, signature: 0x0706_4B50, { reader -> UInt64? in
                      reader.skip(4)
                      return reader.read(UInt64.self)
                  }),
                  let wide = readRecord(at: recordOffset, count: 56, signature: 0x0606_4B50, { reader -> (UInt64, UInt64)? in
                      reader.skip(36)
                      guard let count = reader.read(UInt64.self), let offset = reader.read(UInt64.self) else { return nil }
                      return (count, offset)
                  }) else { return nil }
            (count, offset) = wide
        }
        guard count <= ZipEntryStream.maximumDirectoryBytes else { return nil }
        return bytes(at: offset, count: Int(count))
    }
}

/// What `ZipEntryStream` needs of a central directory record (APPNOTE 4.3.12), sizes and offset
/// taken from the zip64 extended information field where the record says so.
private struct DirectoryRecord {
    var method: UInt16
    var crc: UInt32
    var compressed: UInt64
    var uncompressed: UInt64
    var localHeader: UInt64
    var name: [UInt8]

    /// Reads the record at the reader's position and moves past it; nil when it is not one.
    init?(_ reader: inout ByteReader) {
        guard reader.read(UInt32.self) == 0x0201_4B50 else { return nil }
        reader.skip(6)
        guard let method = reader.read(UInt16.self) else { return nil }
        reader.skip(4)
        guard let crc = reader.read(UInt32.self), let compressed = reader.read(UInt32.self), let uncompressed = reader.read(UInt32.self),
              let nameCount = reader.read(UInt16.self), let extraCount = reader.read(UInt16.self), let commentCount = reader.read(UInt16.self) else {
            return nil
        }
        reader.skip(8)
        guard let localHeader = reader.read(UInt32.self), let name = reader.readBytes(Int(nameCount)),
              let extra = reader.readBytes(Int(extraCount)), reader.remaining >= Int(commentCount) else { return nil }
        reader.skip(Int(commentCount))
        self.method = method
        self.crc = crc
        self.name = name
        self.compressed = UInt64(compressed)
        self.uncompressed = UInt64(uncompressed)
        self.localHeader = UInt64(localHeader)
        // Fields too large for 32 bits are in the zip64 field, in this order.
        guard uncompressed == 0xFFFF_FFFF || compressed == 0xFFFF_FFFF || localHeader == 0xFFFF_FFFF else { return }
        guard let wide = Self.zip64Field(extra) else { return nil }
        let ok: Bool = wide.withUnsafeBytes { raw in
            var values = ByteReader(raw)
            if uncompressed == 0xFFFF_FFFF { guard let v = values.read(UInt64.self) else { return false }; self.uncompressed = v }
            if compressed == 0xFFFF_FFFF { guard let v = values.read(UInt64.self) else { return false }; self.compressed = v }
            if localHeader == 0xFFFF_FFFF { guard let v = values.read(UInt64.self) else { return false }; self.localHeader = v }
            return true
        }
        guard ok else { return nil }
    }

    /// The data of the zip64 extended information field (id 1) of an extra field block.
    private static func zip64Field(_ extra: [UInt8]) -> [UInt8]? {
        extra.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            while let id = reader.read(UInt16.self), let count = reader.read(UInt16.self) {
                guard let data = reader.readBytes(Int(count)) else { return nil }
                if id == 1 { return data }
            }
            return nil
        }
    }
}
