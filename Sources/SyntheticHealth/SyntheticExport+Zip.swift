import Foundation
import ZIPFoundation

extension SyntheticExport {
    /// Writes `export.zip` as the Health app shares it: `apple_health_export/export.xml`, the route
    /// files, and the `__MACOSX/` entries a Mac adds when it re-zips.
    @discardableResult
    public static func writeZip(to path: String, options: Options = Options()) throws -> Summary {
        let work = path + ".parts"
        try? FileManager.default.removeItem(atPath: work)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let summary = try writeFolder(at: work, options: options)
        try? FileManager.default.removeItem(atPath: path)
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        let base = URL(fileURLWithPath: work)
        let routes = try FileManager.default.contentsOfDirectory(atPath: work + "/apple_health_export/workout-routes").sorted()
        try archive.addEntry(with: "apple_health_export/export.xml", relativeTo: base, compressionMethod: .deflate, bufferSize: 1 << 20)
        for route in routes {
            try archive.addEntry(with: "apple_health_export/workout-routes/" + route, relativeTo: base, compressionMethod: .deflate)
        }
        let junk = Data(repeating: 0, count: 120)
        try archive.addEntry(with: "__MACOSX/apple_health_export/._export.xml", type: .file, uncompressedSize: Int64(junk.count)) { position, size in
            junk.subdata(in: Int(position)..<Int(position) + size)
        }
        return summary
    }
}
