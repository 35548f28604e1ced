import Dispatch
import CZlibSystem

/// Raw DEFLATE (zlib, no header) of a frame's plaintext before it is sealed, in log format 3
/// (docs/log-format.md, "Frame"). The event encoding leaves much repetition (types, sources,
/// nearby timestamps): ten years of a generated export's log shrink 2.9 times at level 1, the
/// fastest, which costs the import less than it saves in hashing and sealing.
enum FrameCompression {
    static let level: Int32 = 1

    /// The compressed bytes of `plaintext`, or nil when they would not be smaller.
    static func deflate(_ plaintext: UnsafeRawBufferPointer) -> [UInt8]? {
        guard plaintext.count > 64, let base = plaintext.baseAddress else { return nil }
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(plaintext.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let produced = output.withUnsafeMutableBytes { out -> Int? in
            stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(plaintext.count)
            stream.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(bound)
            guard CZlibSystem.deflate(&stream, Z_FINISH) == Z_STREAM_END else { return nil }
            return bound - Int(stream.avail_out)
        }
        guard let produced, produced < plaintext.count else { return nil }
        output.removeLast(output.count - produced)
        return output
    }

    /// The plaintext of compressed bytes, at most `limit` long; nil when they do not inflate to
    /// one whole stream within the limit (a faulty writer's frame: damage).
    static func inflate(_ compressed: [UInt8], limit: Int) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: min(limit, max(compressed.count * 4, 4096)))
        var produced = 0
        return compressed.withUnsafeBytes { input -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            while true {
                if produced == output.count {
                    guard output.count < limit else { return nil }
                    output.append(contentsOf: repeatElement(0, count: min(limit, output.count * 2) - output.count))
                }
                let status = output.withUnsafeMutableBytes { out -> Int32 in
                    stream.next_out = out.baseAddress!.advanced(by: produced).assumingMemoryBound(to: Bytef.self)
                    stream.avail_out = uInt(out.count - produced)
                    let before = stream.avail_out
                    let status = CZlibSystem.inflate(&stream, Z_NO_FLUSH)
                    produced += Int(before - stream.avail_out)
                    return status
                }
                if status == Z_STREAM_END {
                    guard stream.avail_in == 0 else { return nil }
                    output.removeLast(output.count - produced)
                    return output
                }
                guard status == Z_OK else { return nil }
                // No progress with room left and input exhausted: a cut stream.
                if stream.avail_in == 0 && produced < output.count { return nil }
            }
        }
    }
}

/// One batch's slices, compressed on a background queue while the writer goes on; the writer
/// waits for it before sealing the batch. Only `run` writes `compressed`, before it signals.
final class CompressionJob: @unchecked Sendable {
    let keyID: UInt32
    let batch: EventBatch
    let slices: [(range: Range<Int>, events: Int)]
    private(set) var compressed: [[UInt8]?] = []
    private let done = DispatchSemaphore(value: 0)
    private var waited = false

    init(keyID: UInt32, batch: EventBatch, slices: [(range: Range<Int>, events: Int)]) {
        self.keyID = keyID
        self.batch = batch
        self.slices = slices
    }

    func run() {
        compressed = batch.payload.withUnsafeBytes { payload in
            slices.map { slice in
                slice.range.isEmpty ? nil : FrameCompression.deflate(UnsafeRawBufferPointer(rebasing: payload[slice.range]))
            }
        }
        done.signal()
    }

    /// Returns once `run` has finished (at once after the first wait).
    func wait() {
        guard !waited else { return }
        done.wait()
        waited = true
    }
}
