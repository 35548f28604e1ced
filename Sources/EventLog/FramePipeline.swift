import Dispatch

/// Delivers the frames from an offset onward in order, opening several payloads at once.
///
/// Headers are read one after another (each says where the next starts); the expensive half
/// (authenticate, hash, decrypt) runs for a window of frames on all cores, and the next window
/// is opened in the background while the caller consumes the current one. The chain check needs
/// only the per-frame hashes, so nothing here depends on order; the caller checks placement as
/// frames come out. Delivery stops after the first defect.
struct FramePipeline {
    /// Frames opened together: enough to keep the cores busy, little enough to bound memory
    /// (at most two windows of plaintext are alive).
    static let windowFrames = 16
    static let windowBytes: UInt64 = 16 << 20
    /// Below this many payload bytes a window is opened on the calling thread.
    static let backgroundThreshold: UInt64 = 256 << 10

    let reader: FrameReader
    let end: UInt64
    private var nextOffset: UInt64
    private var inflight: FrameWindow?
    private var ready: [(offset: UInt64, result: Result<LogFrame, FrameDefect>)] = []
    private var readyIndex = 0
    private var stopped = false

    init(reader: FrameReader, from offset: UInt64, end: UInt64) {
        self.reader = reader
        self.nextOffset = offset
        self.end = end
    }

    /// The next frame (or the defect found where it should be), or `nil` at `end`.
    mutating func next() throws -> (offset: UInt64, result: Result<LogFrame, FrameDefect>)? {
        if readyIndex == ready.count {
            guard !stopped, let window = try inflight ?? startWindow() else { return nil }
            inflight = nil
            ready = try window.results()
            readyIndex = 0
            if ready.isEmpty { return nil }
            if case .success = ready[ready.count - 1].result {
                inflight = try startWindow()
            }
        }
        let item = ready[readyIndex]
        readyIndex += 1
        if case .failure = item.result {
            stopped = true
            inflight?.waitUntilDone()
            inflight = nil
        }
        return item
    }

    /// Reads the headers of the next window and starts opening their payloads.
    private mutating func startWindow() throws -> FrameWindow? {
        guard nextOffset < end else { return nil }
        var located: [FrameReader.LocatedHeader] = []
        var bytes: UInt64 = 0
        var headerDefect: (UInt64, FrameDefect)?
        while nextOffset < end, located.count < Self.windowFrames, bytes < Self.windowBytes, headerDefect == nil {
            switch try reader.readHeader(at: nextOffset, fileSize: end) {
            case .failure(let defect):
                headerDefect = (nextOffset, defect)
                nextOffset = end
            case .success(let header):
                located.append(header)
                bytes += UInt64(header.header.payloadLength)
                nextOffset = header.end
            }
        }
        let window = FrameWindow(reader: reader, headers: located, headerDefect: headerDefect)
        window.start(inBackground: bytes >= Self.backgroundThreshold)
        return window
    }
}

/// One window of frames being opened. Workers share the reader only to `pread` and each writes
/// its own result slot; `results()` reads the slots only after the group has finished.
private final class FrameWindow: @unchecked Sendable {
    private let reader: FrameReader
    private let headers: [FrameReader.LocatedHeader]
    private let headerDefect: (UInt64, FrameDefect)?
    private let slots: UnsafeMutableBufferPointer<Result<Result<LogFrame, FrameDefect>, any Error>?>
    private let group = DispatchGroup()

    init(reader: FrameReader, headers: [FrameReader.LocatedHeader], headerDefect: (UInt64, FrameDefect)?) {
        self.reader = reader
        self.headers = headers
        self.headerDefect = headerDefect
        slots = .allocate(capacity: headers.count)
        slots.initialize(repeating: nil)
    }

    deinit {
        group.wait()
        slots.deinitialize()
        slots.deallocate()
    }

    /// Blocks until the background work, if any, has finished.
    func waitUntilDone() { group.wait() }

    func start(inBackground: Bool) {
        guard inBackground else {
            for i in headers.indices { open(i) }
            return
        }
        group.enter()
        DispatchQueue.global().async {
            DispatchQueue.concurrentPerform(iterations: self.headers.count) { i in self.open(i) }
            self.group.leave()
        }
    }

    private func open(_ i: Int) {
        slots[i] = Result { try reader.openPayload(headers[i]) }
    }

    /// The frames in order, up to and including the first defect.
    func results() throws -> [(offset: UInt64, result: Result<LogFrame, FrameDefect>)] {
        group.wait()
        var out: [(UInt64, Result<LogFrame, FrameDefect>)] = []
        out.reserveCapacity(headers.count + 1)
        for (header, slot) in zip(headers, slots) {
            let result = try slot!.get()
            out.append((header.offset, result))
            if case .failure = result { return out }
        }
        if let (offset, defect) = headerDefect { out.append((offset, .failure(defect))) }
        return out
    }
}
