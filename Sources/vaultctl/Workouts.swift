import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct Workouts: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "workouts",
            abstract: "Workouts per period and kind: how many, minutes, energy (kcal) and distance (m).")

        @OptionGroup var vault: VaultOptions

        @OptionGroup var range: DayRange

        @Option(help: "Group by day, ISO week, two weeks (ending on the range's last day) or month.")
        var by: SummaryPeriod = .week

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var period: String
            var type: String
            var count: Int
            var minutes: Double
            var energy: Double
            var distance: Double
        }

        /// `HKWorkoutActivityTypeTraditionalStrengthTraining` → `traditional-strength-training`.
        static func kind(_ activityType: String) -> String { ShortNames.short(for: activityType) ?? activityType }

        func execute() throws {
            let rows = try vault.openWithProjections().workouts(by: by, from: range.from, to: range.to).map {
                Output(period: $0.period, type: Self.kind($0.type), count: $0.count, minutes: Summary.rounded($0.minutes),
                       energy: Summary.rounded($0.energy), distance: Summary.rounded($0.distance))
            }
            if json {
                try Console.json(rows)
                return
            }
            if rows.isEmpty { Console.note("no workouts in this range"); return }
            Console.print("period      kind  count  minutes  kcal  metres")
            for row in rows {
                Console.print("\(row.period.padding(toLength: 10, withPad: " ", startingAt: 0))  \(row.type)  \(row.count)  "
                              + "\(Rings.number(row.minutes))  \(Rings.number(row.energy))  \(Rings.number(row.distance))")
            }
        }
    }
}
