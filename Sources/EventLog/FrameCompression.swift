import Dispatch
import CLibDeflate

/// Raw DEFLATE (zlib, no header) of a frame's plaintext before it is sealed, in log format 3
/// (docs/log-format.md, "Frame"). The event encoding leaves much repetition (types, sources,
/// nearby timestamps): ten years of a generated export's log shrink 2.9 times at level 1, the
/// fastest, which costs the import less than it saves in hashing and sealing.
enum FrameCompression {
    static let level: Int32 = 1

    /// The plaintext of compressed bytes, at most `limit` long; nil when they do not inflate to
    /// one whole stream within the limit, or leave bytes after it (a faulty writer's frame:
    /// damage). libdeflate's whole-buffer inflation, about twice zlib's streamed speed: every
    /// command that reads frames (verify, rebuild, a category-month's identities, an export)
    /// runs through here. The output starts at four times the input and doubles up to `limit`.
    static func inflate(_ compressed: [UInt8], limit: Int) -> [UInt8]? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var capacity = min(limit, max(compressed.count * 4, 4096))
        while true {
            var result = LIBDEFLATE_BAD_DATA
            let output = compressed.withUnsafeBytes { input in
                [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                    var consumed = 0, produced = 0
                    result = libdeflate_deflate_decompress_ex(decompressor, input.baseAddress, input.count,
                                                              buffer.baseAddress, capacity, &consumed, &produced)
                    if result == LIBDEFLATE_SUCCESS && consumed != input.count { result = LIBDEFLATE_BAD_DATA }
                    initialized = result == LIBDEFLATE_SUCCESS ? produced : 0
                }
            }
            switch result {
            case LIBDEFLATE_SUCCESS:
                return output
            case LIBDEFLATE_INSUFFICIENT_SPACE where capacity < limit:
                capacity = min(limit, capacity * 2)
            default:
                return nil
            }
        }
    }
}

/// A compressor for frames: libdeflate's, at `FrameCompression.level`, kept for every frame a
/// job compresses. Its raw DEFLATE is the same format zlib writes and `inflate` reads; at level 1
/// it spent half of zlib's instructions on an import's frames (docs/benchmarks-history.md, "The import's
/// instructions cut by a quarter").
final class Deflater {
    private let compressor: OpaquePointer
    /// Where a frame is compressed before its bytes are copied out at their exact size.
    private var scratch: [UInt8] = []

    init?() {
        guard let compressor = libdeflate_alloc_compressor(FrameCompression.level) else { return nil }
        self.compressor = compressor
    }

    deinit {
        libdeflate_free_compressor(compressor)
    }

    /// Bytes of a large frame compressed first, to see whether the rest is worth it.
    static let probeSize = 64 << 10

    /// The compressed bytes of `plaintext`, or nil when they would not save a sixteenth of it: a
    /// frame stored as it is costs every later read nothing to inflate. A frame of more than
    /// twice `probeSize` is probed first, and stored as it is when its start does not shrink by a
    /// sixteenth either (bytes that do not compress, such as the log benchmark's random events,
    /// made the append four times slower and the read half as fast as before compression).
    func deflate(_ plaintext: UnsafeRawBufferPointer) -> [UInt8]? {
        guard plaintext.count > 64, let base = plaintext.baseAddress else { return nil }
        // libdeflate answers 0 when the output does not fit its room: "does not save a sixteenth".
        let room = plaintext.count - plaintext.count / 16
        if scratch.count < room { scratch = [UInt8](repeating: 0, count: room) }
        let compressor = self.compressor
        return scratch.withUnsafeMutableBytes { out -> [UInt8]? in
            if plaintext.count > 2 * Self.probeSize {
                let probeRoom = Self.probeSize - Self.probeSize / 16
                guard libdeflate_deflate_compress(compressor, base, Self.probeSize, out.baseAddress!, probeRoom) > 0 else { return nil }
            }
            let produced = libdeflate_deflate_compress(compressor, base, plaintext.count, out.baseAddress!, room)
            guard produced > 0 else { return nil }
            return Array(UnsafeRawBufferPointer(rebasing: out[..<produced]))
        }
    }
}

/// The batches of one or more keys, their frames compressed together (on a background queue
/// while the writer goes on, or on every core at a commit, while it waits); the writer seals
/// them in order once `run` has finished. Only `run` writes `compressed`, before it signals.
final class CompressionJob: @unchecked Sendable {
    /// One key's batch and how it is cut into frames.
    struct Part {
        let keyID: UInt32
        let batch: EventBatch
        let slices: [(range: Range<Int>, events: Int)]
    }

    let parts: [Part]
    /// For each part, each frame's compressed bytes (nil: sealed as it is).
    private(set) var compressed: [[[UInt8]?]] = []
    private let done = DispatchSemaphore(value: 0)
    private var waited = false

    init(parts: [Part]) {
        self.parts = parts
    }

    /// Compresses every frame, on `workers` threads at once (this one among them).
    func run(workers: Int = 1) {
        let frames = parts.indices.flatMap { part in parts[part].slices.indices.map { (part, $0) } }
        var results = [[UInt8]?](repeating: nil, count: frames.count)
        let workers = max(1, min(workers, frames.count))
        results.withUnsafeMutableBufferPointer { buffer in
            // Each worker writes only the slots of its own frames (every `workers`-th).
            nonisolated(unsafe) let slots = buffer
            let compress: @Sendable (Int) -> Void = { worker in
                guard let deflater = Deflater() else { return }
                for index in stride(from: worker, to: frames.count, by: workers) {
                    let (part, slice) = frames[index]
                    let range = self.parts[part].slices[slice].range
                    guard !range.isEmpty else { continue }
                    slots[index] = self.parts[part].batch.payload.withUnsafeBytes { deflater.deflate(UnsafeRawBufferPointer(rebasing: $0[range])) }
                }
            }
            if workers == 1 { compress(0) } else { DispatchQueue.concurrentPerform(iterations: workers, execute: compress) }
        }
        var next = 0
        compressed = parts.map { part in
            defer { next += part.slices.count }
            return Array(results[next..<(next + part.slices.count)])
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
