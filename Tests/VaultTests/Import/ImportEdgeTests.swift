import Foundation
@testable import HealthModel
import Testing
@testable import Vault
import VaultTestSupport

/// The limits the malformed corpus exercises, at their edges: which declarations, values and
/// JSON errors pass, and what the messages leave out.
@Suite struct ImportEdgeTests {
    static let record = stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500")

    @Test(arguments: [#"<?xml version="1.0" encoding="UTF-8"?>"#, "<?xml version='1.0' encoding='utf8'?>",
                      #"<?xml version="1.0" encoding="US-ASCII"?>"#, #"<?xml version="1.0"?>"#,
                      #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><?xml-stylesheet href="a.xsl"?>"#])
    func utf8AndItsSubsetsAndNoDeclarationImport(_ declaration: String) throws {
        let t = try ImportTestVault()
        let text = export(Self.record).replacingOccurrences(of: #"<?xml version="1.0" encoding="UTF-8"?>"#, with: declaration)
        #expect(try t.vault.importFiles([t.write("export.xml", text)]).added == 1)
    }

    @Test func anOddEncodingNameIsNotEchoed() throws {
        let t = try ImportTestVault()
        let text = export(Self.record).replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"\u{1B}[31mKOI8 R\"")
        let path = t.write("export.xml", text)
        #expect { try t.vault.importFiles([path]) } throws: { error in
            let message = "\(error)"
            return message.contains("declares a non-UTF-8 encoding") && !message.contains("\u{1B}") && message.contains(path + ":1:1")
        }
    }

    @Test func negativeAmountsAreRejectedOnlyWhereTheyAddUp() throws {
        let t = try ImportTestVault()
        let negativeSteps = stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "-5")
        let negativeDiscrete = negativeSteps.replacingOccurrences(of: "HKQuantityTypeIdentifierStepCount", with: "HKQuantityTypeIdentifierSomeFutureDelta")
            .replacingOccurrences(of: "unit=\"count\"", with: "unit=\"degC\"")
        let report = try t.vault.importFiles([t.write("export.xml", export(negativeSteps + "\n" + negativeDiscrete))])
        #expect(report.added == 1 && report.rejected == 1)
        #expect(report.files[0].warnings.contains { $0.hasPrefix("1 record(s) rejected: negative amount of a quantity that adds up (first at ") && $0.hasSuffix(":4:2)") })
        // CSV and JSON name their short metrics; a type of the user's own is not judged.
        let csv = t.write("s.csv", "type,start,end,value,unit,source\nsteps,2025-08-06 08:00,2025-08-06 09:00,-3,count,P\nDistanceOwn,2025-08-06 08:00,2025-08-06 09:00,-3,m,P\n")
        let csvReport = try t.vault.importFiles([csv])
        #expect(csvReport.added == 1 && csvReport.rejected == 1)
    }

    @Test func brokenJSONIsPlacedAndItsValuesAreNotEchoed() throws {
        let t = try ImportTestVault()
        let path = t.write("s.json", "{\"metric\":\"STEPS\",\n\"data\":[{\"timeRange\":\"2025-08-06 08:00/2025-08-06 09:00\",\"value\":S3cr3t}]}")
        #expect { try t.vault.importFiles([path]) } throws: { error in
            let message = "\(error)"
            return message.hasPrefix(path + ":2:") && message.contains("not valid JSON") && !message.contains("S3cr3t")
        }
    }
}
