import Foundation

/// The kinds of file `import` reads, told apart by extension and, failing that, by content.
public enum ImportFormat: String, Sendable {
    case appleHealthZip = "apple-health-zip"
    case appleHealthXML = "apple-health-xml"
    case companionJSON = "companion-json"
    case csv = "csv"
    /// An ECG recording's CSV (`electrocardiograms/ecg_….csv` of an export).
    case ecgCSV = "apple-health-ecg"
    /// A GPX track alone, from any app (an export's route file, a watch's or a phone's).
    case gpx = "gpx"
    /// A FIT file of a Garmin, Wahoo or Coros device (docs/fit.md).
    case fit = "fit"
    /// Garmin's Training Center XML (`.tcx`).
    case tcx = "tcx"

    /// The format of the file at `path`, from its first bytes and, for CSV, its name.
    public static func detect(_ path: String) throws -> ImportFormat {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ImportError.unreadable(path: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw ImportError.unreadable(path: path, reason: "is a directory") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImportError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        return try detect(head: head, name: path)
    }

    /// The format of bytes that begin with `head` (512 bytes are enough); `name` is used in
    /// errors, and a name ending `.csv` says CSV.
    public static func detect(head: [UInt8], name path: String) throws -> ImportFormat {
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .appleHealthZip }
        // FIT: a 12- or 14-byte header with ".FIT" at bytes 8 to 11.
        if head.count >= 12, head[0] == 12 || head[0] == 14, head[8...11].elementsEqual(Array(".FIT".utf8)) { return .fit }
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            throw ImportError.notAnExport(path: path, reason: "UTF-16 text; Apple Health exports are UTF-8")
        }
        let text = String(decoding: head.drop(while: { $0 == 0xEF || $0 == 0xBB || $0 == 0xBF }), as: UTF8.self)
        let trimmed = text.drop(while: { $0.isWhitespace })
        if trimmed.hasPrefix("<") { return text.contains("<gpx") ? .gpx : text.contains("TrainingCenterDatabase") ? .tcx : .appleHealthXML }
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") { return .companionJSON }
        if !trimmed.lowercased().hasPrefix("type,"), ECGReader.looksLikeECG(head) { return .ecgCSV }
        if path.lowercased().hasSuffix(".csv") || trimmed.lowercased().hasPrefix("type,") { return .csv }
        if head.isEmpty { throw ImportError.notAnExport(path: path, reason: "the file is empty") }
        throw ImportError.unsupportedFormat(path: path)
    }
}
