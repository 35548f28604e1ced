import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct ExerciseCommand: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "exercise",
            abstract: "Exercises practised in sets (`vaultctl practice NAME --reps N`): the catalogue and your own.",
            subcommands: [Add.self, List.self], defaultSubcommand: List.self)

        func execute() throws {}

        struct Add: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "add", abstract: "Define an exercise (or define one again from now on).")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "The exercise's name.") var name: String
            @Option(help: ArgumentHelp("The body parts it works: \(BodyPart.allCases.map(\.rawValue).joined(separator: ", ")).",
                                       valueName: "P[,P...]"))
            var bodyPart: String
            @Option(help: ArgumentHelp("strength, endurance or mobility.", valueName: "M")) var motion: String

            func execute() throws {
                let parts: [BodyPart]
                switch BodyPart.parse(list: bodyPart) {
                case .success(let parsed): parts = parsed
                case .failure(let unknown):
                    throw ValidationError("--body-part: '\(unknown.word)' is none of \(BodyPart.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                guard let motion = Motion(rawValue: motion.lowercased()) else {
                    throw ValidationError("--motion takes strength, endurance or mobility, not '\(motion)'")
                }
                let made = try vault.openForWriting().addExercise(name: name, bodyParts: parts, motion: motion)
                Console.print("exercise '\(made.name)' defined: \(made.bodyParts.map(\.rawValue).joined(separator: ", ")); \(made.motion.rawValue)")
            }
        }

        struct List: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the exercises.")
            @OptionGroup var vault: VaultOptions
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var name: String
                var bodyParts: [String]
                var motion: String
            }

            func execute() throws {
                let rows = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).exercises().map {
                    Output(name: $0.name, bodyParts: $0.bodyParts.map(\.rawValue), motion: $0.motion.rawValue)
                }
                if json {
                    try Console.json(rows)
                    return
                }
                for row in rows { Console.print("\(row.name): \(row.bodyParts.joined(separator: ", ")); \(row.motion)") }
            }
        }
    }

    struct Practice: VaultCommand {
        static let configuration = CommandConfiguration(commandName: "practice", abstract: "Log a set of an exercise, now or at a local time.")
        @OptionGroup var vault: VaultOptions
        @Argument(help: "The exercise's name (`vaultctl exercise list`).") var name: String
        @Option(help: "Repetitions done.") var reps: Int
        @Option(help: ArgumentHelp("How long the set took, in minutes.", valueName: "MIN")) var duration: Double?
        @Option(help: ArgumentHelp("When, in local time (TZ).", valueName: "YYYY-MM-DD HH:MM")) var at: String?

        func execute() throws {
            let seconds = try duration.map { minutes -> Int in
                guard minutes.isFinite, minutes > 0, minutes <= 1440 else { throw ValidationError("--duration takes minutes above 0, at most a day") }
                return max(1, Int((minutes * 60).rounded()))
            }
            let when = try Track.instant(at)
            let entry = try vault.openForWriting().practice(name: name, repetitions: reps, seconds: seconds, at: when)
            let time = entry.seconds.map { " in \(BundleNumber.text(Double($0) / 60)) min" } ?? ""
            Console.print("\(entry.exercise.name): \(entry.repetitions) reps\(time) on \(entry.day)")
        }
    }

    struct Stats: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats",
            abstract: "Training per period: sets, repetitions, minutes, workouts, and their shares per body part and motion.")
        @OptionGroup var vault: VaultOptions
        @OptionGroup var range: DayRange
        @Option(help: "Group by ISO week, two weeks (ending on the range's last day) or month.") var by: SummaryPeriod = .week
        @Flag(help: "Shares by minutes instead of by count.") var minutes = false
        @Flag(help: "Print one JSON document on stdout.") var json = false

        struct Output: Encodable {
            var period: String
            var sets: Int
            var reps: Int
            var minutes: Double
            var workouts: Int
            var bodyParts: [String: Double]
            var motion: [String: Double]
        }

        func validate() throws {
            guard by != .day else { throw ValidationError("--by takes week, 2weeks or month") }
        }

        /// A share as printed: six decimals (a period's shares still sum to 1 within 1e-5).
        static func share(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }

        func execute() throws {
            let periods = try vault.openWithProjections().trainingStats(by: by, from: range.from, to: range.to,
                                                                        weight: minutes ? .minutes : .count)
            let rows = periods.map {
                Output(period: $0.period, sets: $0.sets, reps: $0.repetitions, minutes: Summary.rounded($0.minutes), workouts: $0.workouts,
                       bodyParts: $0.bodyParts.mapValues(Self.share), motion: $0.motion.mapValues(Self.share))
            }
            if json {
                try Console.json(rows)
                return
            }
            if rows.isEmpty { Console.note("no sets or workouts in this range"); return }
            for row in rows {
                Console.print("\(row.period)  \(row.sets) sets, \(row.reps) reps, \(Rings.number(row.minutes)) min, \(row.workouts) workouts")
                Console.print("  body parts: " + Self.percentages(row.bodyParts))
                Console.print("  motion:     " + Self.percentages(row.motion))
            }
        }

        /// `legs 50%, chest 25%, ...`, largest first.
        static func percentages(_ shares: [String: Double]) -> String {
            guard !shares.isEmpty else { return "-" }
            return shares.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                .map { "\($0.key) \(Rings.number(($0.value * 1000).rounded() / 10))%" }.joined(separator: ", ")
        }
    }
}
