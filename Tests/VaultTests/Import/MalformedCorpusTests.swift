import Foundation
import Testing
import VaultTestSupport
import Vault

/// Every file of `Fuzz/malformed/` imported into a vault that holds data, against the outcome
/// `Fuzz/malformed/expected.txt` gives it:
/// `refused FRAGMENT`: the import fails with an error naming the file and saying FRAGMENT, and the
/// log and its head record are byte for byte what they were. A file whose every record is
/// rejected is refused so too (issue 36: it used to exit 0), its reasons in the error.
@Suite struct MalformedCorpusTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/malformed").path

    struct Expectation: CustomStringConvertible {
        var file: String
        var fragment: String
        var description: String { file }
    }

    static func expectations() throws -> [Expectation] {
        try String(contentsOfFile: folder + "/expected.txt", encoding: .utf8)
            .split(separator: "\n")
            .filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { line in
                let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
                guard parts.count == 3, parts[1] == "refused" else {
                    throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "bad line in expected.txt: \(line)"])
                }
                return Expectation(file: parts[0], fragment: parts[2])
            }
    }

    @Test func everyFileHasAnExpectation() throws {
        let listed = Set(try Self.expectations().map(\.file))
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder)).subtracting(["expected.txt"])
        #expect(listed == present)
    }

    @Test(arguments: try expectations())
    func malformedFileIsRefusedClearlyAndChangesNothing(_ expected: Expectation) throws {
        let t = try ImportTestVault()
        let baseline = t.write("baseline.csv", "type,start,end,value,unit,source\nsteps,2025-08-06 08:00,2025-08-06 09:00,38,count,Phone\n")
        #expect(try t.vault.importFiles([baseline]).added == 1)
        let logBefore = try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log"))
        let headBefore = try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.head"))
        let path = Self.folder + "/" + expected.file

        do {
            let report = try t.vault.importFiles([path])
            Issue.record("\(expected.file) was imported: \(report)")
        } catch {
            let message = "\(error)"
            #expect(message.contains(path), "\(message)")
            #expect(message.contains(expected.fragment), "\(message)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log")) == logBefore)
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.head")) == headBefore)
        // The vault still opens and verifies, and still holds its one sample.
        let report = try Vault.verify(at: t.path, passphrase: passphrase("p"))
        #expect(report.isOK)
        #expect(try t.vault.summary(metric: "steps", by: .day).map(\.value) == [38])
    }
}
