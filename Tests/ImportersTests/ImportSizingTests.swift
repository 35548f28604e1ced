import Foundation
import Importers
import SyntheticHealth
import Testing
import TestSupport

/// An import sizes what it keeps per record from the export XML's size: a zip's is read from
/// its directory (the zip's own size undercounts it many times over).
@Suite struct ImportSizingTests {
    @Test func aZipsExportXMLIsSizedFromItsDirectory() throws {
        let dir = TemporaryDirectory()
        let options = SyntheticExport.Options(days: 3, seed: 7)
        try SyntheticExport.writeFolder(at: dir.path + "/folder", options: options)
        try SyntheticExport.writeZip(to: dir.path + "/export.zip", options: options)
        let xml = dir.path + "/folder/apple_health_export/export.xml"
        let size = try #require(FileManager.default.attributesOfItem(atPath: xml)[.size] as? NSNumber).intValue
        let zipSize = try #require(FileManager.default.attributesOfItem(atPath: dir.path + "/export.zip")[.size] as? NSNumber).intValue
        #expect(Importer.exportXMLBytes(inZipAt: dir.path + "/export.zip") == size)
        #expect(size > zipSize)
        // Not a zip: no answer (the caller counts the file's own size).
        #expect(Importer.exportXMLBytes(inZipAt: xml) == nil)
    }
}
