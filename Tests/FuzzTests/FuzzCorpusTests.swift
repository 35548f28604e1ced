import Foundation
import FuzzTargets
import Testing

/// Replays the kept fuzz corpus (`Fuzz/corpus/TARGET/`, a sample of it in CI) and every input
/// that once broke a promise (`Fuzz/regressions/TARGET/`) through the same harnesses libFuzzer
/// drives.
@Suite struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz").path

    static func files(_ folder: String) -> [String] {
        let path = fuzzDirectory + "/" + folder
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
    }

    /// At most `HEALTHVAULT_FUZZ_REPLAY` (default 80) of a kept corpus, spread evenly over its
    /// sorted names, so that CI stays quick as the corpus grows; every past finding is always
    /// replayed. `HEALTHVAULT_FUZZ_REPLAY=0` replays everything.
    static func sample(_ files: [String]) -> [String] {
        let limit = Int(ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_REPLAY"] ?? "") ?? 80
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
