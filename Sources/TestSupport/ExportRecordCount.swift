import Foundation

/// Counts an Apple Health export's records from its text, without the importer: the zip read by
/// Info-ZIP's `unzip -p`, the records found by their tags. An oracle for tests whose expected
/// counts come from a file.
public enum ExportRecordCount {
    /// `apple_health_export/export.xml` of a zip.
    public static func xml(inZip path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unzip")
        process.arguments = ["-p", path, "apple_health_export/export.xml"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadCorruptFile) }
        return String(decoding: data, as: UTF8.self)
    }

    /// `<Record>` elements whose type starts with `typePrefix` and whose `startDate` starts with
    /// `startPrefix` (a local date or month as written).
    public static func records(in xml: String, typePrefix: String, startPrefix: String = "") -> Int {
        xml.components(separatedBy: "<Record type=\"" + typePrefix).dropFirst().filter { rest in
            rest.prefix { $0 != ">" }.contains("startDate=\"" + startPrefix)
        }.count
    }
}
