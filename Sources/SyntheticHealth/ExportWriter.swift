import Foundation

/// Writes an Apple Health export XML to a file through a buffer: constant memory whatever the size.
final class ExportWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private(set) var records = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { flush() }
    }

    func countRecord() { records += 1 }

    func flush() {
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        flush()
        try handle.close()
    }

    /// `2024-01-01 01:01:36 +0200` for a UTC instant shown at `offset`.
    static func date(_ instant: Int64, _ offset: Int32) -> String {
        let local = instant + Int64(offset)
        let day = TimeZonePlan.floorDiv(local, 86_400)
        let (y, m, d) = TimeZonePlan.civil(day)
        let s = local - day * 86_400
        let sign = offset < 0 ? "-" : "+"
        let o = abs(Int(offset)) / 60
        return "\(y)-\(two(m))-\(two(d)) \(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60)) \(sign)\(two(Int64(o / 60)))\(two(Int64(o % 60)))"
    }

    /// `2024-01-01T00:00:00Z`.
    static func isoDate(_ instant: Int64) -> String {
        let day = TimeZonePlan.floorDiv(instant, 86_400)
        let (y, m, d) = TimeZonePlan.civil(day)
        let s = instant - day * 86_400
        return "\(y)-\(two(m))-\(two(d))T\(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60))Z"
    }

    static func day(_ dayNumber: Int64) -> String {
        let (y, m, d) = TimeZonePlan.civil(dayNumber)
        return "\(y)-\(two(m))-\(two(d))"
    }

    private static func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
}
