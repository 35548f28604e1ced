import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Ring: ExpressibleByArgument {}

extension Vaultctl {
    struct Goals: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "goals",
            abstract: "Ring goals as they changed over time; `goals set` records a new one.",
            subcommands: [Set.self])

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var ring: String
            var value: Double
            var from: String
        }

        func execute() throws {
            let changes = try vault.openWithProjections().goalChanges()
            if json {
                try Console.json(changes.map { Output(ring: $0.ring.rawValue, value: $0.value, from: $0.from.description) })
                return
            }
            if changes.isEmpty {
                Console.print("no goals set here; each day uses the goal in its imported activity summary, else the last one known, else move \(Rings.number(Ring.move.defaultGoal)) kcal, exercise \(Rings.number(Ring.exercise.defaultGoal)) min, stand \(Rings.number(Ring.stand.defaultGoal)) h")
            }
            for change in changes {
                Console.print("\(change.ring.rawValue) \(Rings.number(change.value)) \(change.ring.unit) from \(change.from)")
            }
        }

        struct Set: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "set", abstract: "Set a ring goal, in force from a day on (default: today).")

            @OptionGroup var vault: VaultOptions

            @Argument(help: ArgumentHelp("move (kcal), exercise (minutes) or stand (hours).", valueName: "RING"))
            var ring: Ring

            @Argument(help: "The new goal.")
            var value: Double

            @Option(help: ArgumentHelp("First day the goal is in force.", valueName: "YYYY-MM-DD"))
            var from: LocalDay?

            func execute() throws {
                let opened = try vault.openForWriting()
                let day = from ?? LocalDay(instant: Int64(Date().timeIntervalSince1970),
                                           utcOffset: Int32(TimeZone.current.secondsFromGMT()))
                let warning = try opened.setGoal(ring, value: value, from: day)
                vault.reportProjectionNotice(of: opened, warning: warning)
                Console.print("\(ring.rawValue) goal \(Rings.number(value)) \(ring.unit) from \(day)")
            }
        }
    }
}
