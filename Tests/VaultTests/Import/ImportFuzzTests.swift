import EventLog
import Foundation
@testable import HealthModel
@testable import Importers
import SyntheticHealth
import Testing
import VaultTestSupport
@testable import Vault

/// Mutated inputs never crash the importers, and a failed import leaves the vault as it was.
/// CI runs a bounded number of mutations; `FUZZ_ITERATIONS=N make test` runs more.
@Suite struct ImportFuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["FUZZ_ITERATIONS"] ?? "") ?? 400

    /// Everything the Apple Health parser emits for `bytes` fed in the given chunk sizes.
    static func parse(_ bytes: [UInt8], chunks: [Int]) throws -> (events: [VaultEvent], rejected: Int) {
        var events: [VaultEvent] = []
        var rejected = 0
        var handler = AppleHealthHandler(emit: { event, _ in events.append(event) }, reject: { _, _ in rejected += 1 })
        var tokenizer = XMLTokenizer()
        var offset = 0
        var i = 0
        while offset < bytes.count {
            let size = max(1, chunks[i % chunks.count])
            let end = min(bytes.count, offset + size)
            try bytes[offset..<end].withUnsafeBytes { try tokenizer.feed($0, final: false, handler: &handler) }
            offset = end
            i += 1
        }
        try tokenizer.feed(UnsafeRawBufferPointer(start: nil, count: 0), final: true, handler: &handler)
        return (events, rejected)
    }

    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let dir = TemporaryDirectory()
        try SyntheticExport.writeFolder(at: dir.path, options: .init(days: 1, firstDay: (2024, 3, 30)))
        let full = try String(contentsOfFile: dir.path + "/apple_health_export/export.xml", encoding: .utf8)
        // About 60 kB of it, cut before a record and closed again.
        let cut = full.range(of: "\n <Record", range: full.index(full.startIndex, offsetBy: 60_000)..<full.endIndex)!.lowerBound
        let generated = Array((full[..<cut] + "\n</HealthData>\n").utf8)
        return [
            ("dogsheep.xml", [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("dogsheep/export.xml"))))),
            ("alxdrcirilo.xml", [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("alxdrcirilo/export.xml"))))),
            ("generated.xml", generated),
            ("steps.json", Array(#"{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38},{"timeRange":"2025-08-06 09:00/2025-08-06 10:00","value":12.5}]}"#.utf8)),
            ("samples.csv", Array("type,start,end,value,unit,source\nsteps,2025-08-06 08:00,2025-08-06 09:00,38,count,\"A, b\"\nheart-rate,2025-08-06T08:00:00+02:00,2025-08-06T08:00:00+02:00,61,count/min,W\n".utf8)),
        ]
    }

    /// The mutations' seed: `HEALTHVAULT_FUZZ_SEED` to replay or vary a run, printed with any failure.
    static let seed = UInt64(ProcessInfo.processInfo.environment["HEALTHVAULT_FUZZ_SEED"] ?? "") ?? 20_261_123

    @Test func chunkBoundariesDoNotChangeWhatIsParsed() throws {
        var rng = SeededRandom(seed: Self.seed)
        for (name, bytes) in try Self.seeds() where name.hasSuffix(".xml") {
            let whole = try Self.parse(bytes, chunks: [bytes.count])
            #expect(!whole.events.isEmpty)
            for pattern in [[1], [2, 3], [7], [4096], (0..<20).map { _ in Int.random(in: 1...300, using: &rng) }] {
                let split = try Self.parse(bytes, chunks: pattern)
                #expect(split.events == whole.events, "\(name) in chunks of \(pattern.prefix(3))")
                #expect(split.rejected == whole.rejected)
            }
        }
    }

    @Test func mutatedInputsNeverCrashAndFailedImportsChangeNothing() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([Fixtures.path("jshrake/export.zip")])
        var rng = SeededRandom(seed: Self.seed)
        let seeds = try Self.seeds()
        let interesting: [UInt8] = Array("<>\"'&;/=!?[]-\n\r\t\u{0B}\0,{}:".utf8) + [0xFF, 0xC3, 0x80]
        var outcomes: [String: Int] = [:]
        for i in 0..<Self.iterations {
            let (name, seed) = seeds[i % seeds.count]
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<6, using: &rng) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.insert(interesting.randomElement(using: &rng)!, at: at)
                case 2: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...64, using: &rng)))
                case 3: bytes = Array(bytes.prefix(at))
                case 4:
                    let end = min(bytes.count, at + Int.random(in: 1...200, using: &rng))
                    bytes.insert(contentsOf: bytes[at..<end], at: Int.random(in: 0...bytes.count, using: &rng))
                default: bytes[at] = interesting.randomElement(using: &rng)!
                }
            }
            let file = t.write("fuzz-\(i)-\(name)", String(decoding: bytes, as: UTF8.self))
            try Self.importMutated(bytes, as: file, into: t, outcomes: &outcomes, context: "\(name) #\(i)")
        }
        #expect(try Vault.verify(at: t.path, passphrase: passphrase("p")).isOK)
        // Both outcomes occur: the mutations are neither all harmless nor all fatal.
        #expect(outcomes["imported", default: 0] > 0 && outcomes["refused", default: 0] > 0, "\(outcomes)")
    }

    /// Imports `bytes` written to `file`: counted as imported, or as refused with the file named
    /// and the log as it was; any other error fails the test.
    static func importMutated(_ bytes: [UInt8], as file: String, into t: ImportTestVault, outcomes: inout [String: Int], context: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let before = try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log"))
        do {
            _ = try t.vault.importFiles([file])
            outcomes["imported", default: 0] += 1
        } catch let error as ImportError {
            outcomes["refused", default: 0] += 1
            #expect(try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log")) == before, "\(context) (seed \(Self.seed)): \(error)")
            #expect("\(error)".contains(file), "the error names the file: \(error)")
        }
    }
}
