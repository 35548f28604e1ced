import ArgumentParser
import Foundation
import SyntheticHealth

extension VaultBench {
    /// Writes a synthetic export.zip (or folder) for benchmarks and manual testing.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a synthetic Apple Health export.zip.")

        @Option(help: "Days to cover.") var days = 365
        @Option(help: "Seed of the generator.") var seed: UInt64 = 1
        @Option(help: "Where to write the zip.") var out: String

        func run() throws {
            let (summary, seconds) = try measure { try SyntheticExport.writeZip(to: out, options: .init(days: days, seed: seed)) }
            let zipSize = (try FileManager.default.attributesOfItem(atPath: out)[.size] as? NSNumber)?.int64Value ?? 0
            print("wrote \(out): \(grouped(summary.records)) records, \(summary.routeFiles) routes, \(summary.xmlBytes / 1_000_000) MB of XML, \(zipSize / 1_000_000) MB zipped, in \(seconds.formatted(1)) s")
        }
    }
}
