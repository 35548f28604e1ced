import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct Streaks: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "streaks",
            abstract: "Current and longest streak of closed rings, per ring and for all three, or of a tracker's successful days.")

        @OptionGroup var vault: VaultOptions

        @Option(help: ArgumentHelp("A tracker's streak of successful days instead of the rings'.", valueName: "NAME"))
        var tracker: String?

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var current: Int
            var currentFrom: String?
            var currentTo: String?
            var longest: Int
            var longestFrom: String?
            var longestTo: String?

            init(_ streak: Streak) {
                current = streak.current
                currentFrom = streak.currentFrom?.description
                currentTo = streak.currentTo?.description
                longest = streak.longest
                longestFrom = streak.longestFrom?.description
                longestTo = streak.longestTo?.description
            }
        }

        func execute() throws {
            if let tracker {
                let streak = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).trackerStreak(name: tracker)
                if json {
                    try Console.json(Output(streak))
                } else {
                    Console.print(Self.describe(tracker, streak))
                }
                return
            }
            let streaks = try vault.openWithProjections().streaks()
            if json {
                try Console.json(["move": Output(streaks.move), "exercise": Output(streaks.exercise),
                                  "stand": Output(streaks.stand), "all": Output(streaks.all)])
                return
            }
            for (name, streak) in [("move", streaks.move), ("exercise", streaks.exercise), ("stand", streaks.stand), ("all three", streaks.all)] {
                Console.print(Self.describe(name, streak))
            }
        }

        static func describe(_ name: String, _ streak: Streak) -> String {
            func span(_ from: LocalDay?, _ to: LocalDay?) -> String {
                guard let from, let to else { return "" }
                return " (\(from) to \(to))"
            }
            return "\(name): current \(streak.current) days\(span(streak.currentFrom, streak.currentTo)), "
                + "longest \(streak.longest) days\(span(streak.longestFrom, streak.longestTo))"
        }
    }
}
