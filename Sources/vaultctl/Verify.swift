import ArgumentParser
import Vault

extension Vaultctl {
    struct Verify: VaultCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the whole log; exit non-zero on any damage, naming where.")

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var ok: Bool
            var frames: Int
            var events: UInt64
            var problems: [String]
            var warnings: [String]
        }

        func execute() throws {
            let report = try Vault.verify(at: vault.directory, passphrase: try vault.passphrase())
            let warnings = report.tornTail.map { ["\($0); the next write cuts it away"] } ?? []
            if json {
                try Console.json(Output(
                    ok: report.isOK, frames: report.frames, events: report.events,
                    problems: report.problems, warnings: warnings))
            } else {
                for warning in warnings { Console.note("warning: \(warning)") }
                if report.isOK {
                    Console.print("ok: \(report.frames) frames, \(report.events) events, chain and head record consistent")
                } else {
                    for problem in report.problems { Console.error(problem) }
                }
            }
            if !report.isOK { throw ExitCode.failure }
        }
    }
}
