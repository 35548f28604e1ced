import Foundation
import FuzzTargets
import TestSupport
import Testing
import Vault
import VaultTestSupport

/// Replays the whole kept fuzz corpus (`Fuzz/corpus/TARGET/`) and every input that once broke a
/// promise (`Fuzz/regressions/TARGET/`) through the same harnesses libFuzzer drives.
@Suite struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz").path

    static func files(_ folder: String) -> [String] {
        let path = fuzzDirectory + "/" + folder
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
    }

    /// The whole kept corpus (1,509 files, about 8 s here); `HEALTHVAULT_FUZZ_REPLAY=N` replays N
    /// of it, spread evenly over its sorted names, for a quick local run. A sample of 80 was the
    /// default until 2026-11-27, and never reached the input that broke `verify` on a NUL in a
    /// source's name (Fuzz/regressions/README.md).
    static func sample(_ files: [String]) -> [String] {
        let limit = Int(ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_REPLAY"] ?? "") ?? 0
        guard limit > 0, files.count > limit else { return files }
        return (0..<limit).map { files[$0 * files.count / limit] }
    }

    static func workspace(_ target: FuzzTarget) -> String {
        NSTemporaryDirectory() + "/hv-fuzz-\(target.rawValue)-\(UUID().uuidString.prefix(8))"
    }

    @Test(arguments: FuzzTarget.allCases)
    func generatedSeedsAreAccepted(_ target: FuzzTarget) throws {
        let directory = Self.workspace(target)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let harness = try target.makeHarness(workspace: directory)
        let seeds = try harness.seeds()
        #expect(!seeds.isEmpty)
        for seed in seeds {
            #expect(try harness.run(seed.bytes) == .accepted, "\(target.rawValue)/\(seed.name)")
        }
    }

    /// Every input that once broke a promise gives the outcome `Fuzz/regressions/expected.txt`
    /// records for it (accepted, or refused with the text given); the folder must exist, hold
    /// inputs, and list each of them.
    @Test func everyRegressionGivesItsRecordedOutcome() throws {
        let root = Self.fuzzDirectory + "/regressions"
        let manifest = try String(contentsOfFile: root + "/expected.txt", encoding: .utf8)
        var expected: [String: String] = [:]
        var figures: [String: [String: Int]] = [:]
        for line in manifest.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1)
            var outcome = parts.count == 2 ? String(parts[1]) : ""
            if outcome.hasPrefix("accepted ") {
                for pair in outcome.dropFirst("accepted ".count).split(separator: " ") {
                    let kv = pair.split(separator: "=")
                    figures[String(parts[0]), default: [:]][String(kv[0])] = Int(kv[1])
                }
                outcome = "accepted"
            }
            expected[String(parts[0])] = outcome
        }
        var found: [String] = []
        for target in FuzzTarget.allCases {
            found += Self.files("regressions/" + target.rawValue).map { target.rawValue + "/" + ($0 as NSString).lastPathComponent }
        }
        #expect(found.count >= 10, "Fuzz/regressions holds \(found.count) inputs")
        #expect(Set(found) == Set(expected.keys), "listed but missing, or present but not listed")
        for target in FuzzTarget.allCases {
            let inputs = found.filter { $0.hasPrefix(target.rawValue + "/") }.sorted()
            guard !inputs.isEmpty else { continue }
            let directory = Self.workspace(target)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let harness = try target.makeHarness(workspace: directory)
            for input in inputs {
                let outcome = try harness.run([UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/" + input))))
                let want = expected[input] ?? ""
                switch outcome {
                case .accepted:
                    #expect(want == "accepted", "\(input): accepted, expected \(want)")
                case .refused(let message):
                    #expect(want.hasPrefix("refused: ") && message.contains(want.dropFirst("refused: ".count)), "\(input): refused (\(message)), expected \(want)")
                }
                if let want = figures[input] { try Self.checkFigures(of: root + "/" + input, target: target, want, input) }
            }
        }
    }

    /// Imports one regression input alone into a new vault, under the name its harness gives it,
    /// and checks what the import reports.
    static func checkFigures(of path: String, target: FuzzTarget, _ want: [String: Int], _ input: String) throws {
        let dir = TemporaryDirectory("regression")
        let name = ["apple-xml": "export.xml", "apple-zip": "export.zip", "json": "samples.json", "csv": "samples.csv"][target.rawValue] ?? "input"
        try FileManager.default.copyItem(atPath: path, toPath: dir.file(name))
        let report = try makeVault(at: dir.file("vault"), passphrase: "regression").importFiles([dir.file(name)])
        if let added = want["added"] { #expect(report.added == added, "\(input): added \(report.added)") }
        if let rewrites = want["rewrites"] { #expect(report.rewrites == rewrites, "\(input): rewrites \(report.rewrites)") }
    }

    @Test(arguments: FuzzTarget.allCases)
    func keptCorpusAndRegressionsKeepEveryPromise(_ target: FuzzTarget) throws {
        let directory = Self.workspace(target)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let harness = try target.makeHarness(workspace: directory)
        let corpus = Self.files("corpus/" + target.rawValue)
        #expect(!corpus.isEmpty, "Fuzz/corpus/\(target.rawValue) is empty")
        for path in Self.sample(corpus) + Self.files("regressions/" + target.rawValue) {
            let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            do {
                _ = try harness.run(input)
            } catch {
                Issue.record("\(path): \(error)")
            }
        }
    }
}
