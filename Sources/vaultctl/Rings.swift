import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct Rings: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "rings",
            abstract: "Move / exercise / stand per day, computed from the samples, with the goals in force.")

        @OptionGroup var vault: VaultOptions
        @OptionGroup var range: DayRange

        @Flag(help: "Show the values in Apple's imported activity summaries beside the computed ones.")
        var compare = false

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var date: String
            var move: Double
            var moveGoal: Double
            var exercise: Double
            var exerciseGoal: Double
            var stand: Int
            var standGoal: Double
            var appleMove: Double?
            var appleExercise: Double?
            var appleStand: Double?
        }

        func execute() throws {
            let opened = try vault.openWithProjections()
            let days = try opened.rings(from: range.from, to: range.to)
            if !days.isEmpty, try !opened.goalsKnown() {
                // Said, never silently assumed: an iPhone without a Watch writes goals of 0.
                Console.note("no ring goal was ever set (nor in Apple's summaries): 400 kcal, 30 min and 12 h are assumed; `vaultctl goals set` sets yours")
            }
            if json {
                try Console.json(days.map { day in
                    Output(date: day.day.description, move: (day.move * 10).rounded() / 10, moveGoal: day.moveGoal,
                           exercise: day.exercise.rounded(), exerciseGoal: day.exerciseGoal,
                           stand: day.stand, standGoal: day.standGoal,
                           appleMove: compare ? day.apple?.move : nil, appleExercise: compare ? day.apple?.exercise : nil,
                           appleStand: compare ? day.apple?.stand : nil)
                })
                return
            }
            if days.isEmpty { Console.note("no ring data in this range"); return }
            Console.print(compare
                ? "date        move (apple)/goal kcal  exercise (apple)/goal min  stand (apple)/goal h"
                : "date        move/goal kcal   exercise/goal min  stand/goal h")
            for day in days { Console.print(line(day)) }
        }

        private func line(_ day: RingDay) -> String {
            func mark(_ ring: Ring) -> String { day.closed(ring) ? "*" : " " }
            func apple(_ value: Double?) -> String { value.map { " (\(Self.number($0)))" } ?? " (-)" }
            let move = "\(Self.number(day.move))\(compare ? apple(day.apple?.move) : "")/\(Self.number(day.moveGoal))\(mark(.move))"
            let exercise = "\(Self.number(day.exercise))\(compare ? apple(day.apple?.exercise) : "")/\(Self.number(day.exerciseGoal))\(mark(.exercise))"
            let stand = "\(day.stand)\(compare ? apple(day.apple?.stand) : "")/\(Self.number(day.standGoal))\(mark(.stand))"
            return "\(day.day)  \(move.padding(toLength: compare ? 24 : 17, withPad: " ", startingAt: 0))"
                + "\(exercise.padding(toLength: compare ? 27 : 19, withPad: " ", startingAt: 0))\(stand)"
        }

        /// Whole numbers without a fraction, others with one decimal; beyond what an integer holds
        /// (an infinite sum of absurd values in a vault of an older build), as `%g` writes it.
        static func number(_ value: Double) -> String {
            let rounded = (value * 10).rounded() / 10
            guard rounded.magnitude < 1e15 else { return String(format: "%g", value) }
            return rounded == rounded.rounded() ? String(Int64(rounded)) : String(format: "%.1f", rounded)
        }
    }
}
