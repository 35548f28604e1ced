import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct Verify: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check the whole log; exit non-zero on any damage, naming where.")

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var ok: Bool
            var frames: Int
            var events: UInt64
            var erasedFrames: Int
            var erasedEvents: UInt64
            var erasures: [Erasure]
            var problems: [String]
            var warnings: [String]
        }

        /// An erasure as the audit trail records it: not damage.
        struct Erasure: Encodable {
            var at: String
            var by: String
            var categories: [String]
            var months: [String]
            var events: Int
        }

        func execute() throws {
            let passphrase = try vault.passphrase()
            let report = try Vault.verify(at: vault.directory, passphrase: passphrase)
            let warnings = (report.tornTail.map { ["\($0); the next write cuts it away"] } ?? []) + report.warnings
            let iso = ISO8601DateFormatter()
            let erasures = report.isOK
                ? try Vault.open(at: vault.directory, passphrase: passphrase).consentLedger().erasures.map { e in
                    Erasure(at: iso.string(from: e.at), by: "the vault's owner (vaultctl erase)", categories: e.categories, months: e.months, events: e.events)
                } : []
            if json {
                try Console.json(Output(
                    ok: report.isOK, frames: report.frames, events: report.events, erasedFrames: report.erasedFrames,
                    erasedEvents: report.erasedEvents, erasures: erasures, problems: report.problems, warnings: warnings))
            } else {
                for warning in warnings { Console.note("warning: \(warning)") }
                if report.isOK {
                    let erased = report.erasedFrames > 0 ? " (\(report.erasedFrames) of them erased, \(report.erasedEvents) events: not damage)" : ""
                    Console.print("ok: \(report.frames) frames\(erased), \(report.events) events, chain and head record consistent")
                    for e in erasures {
                        Console.print("erased at \(e.at) by \(e.by): \(e.categories.joined(separator: ",")) for \(e.months.joined(separator: ",")), \(e.events) events")
                    }
                } else {
                    for problem in report.problems { Console.error(problem) }
                }
            }
            if !report.isOK { throw ExitCode.failure }
        }
    }
}
