import ArgumentParser
import Foundation
import Vault

extension SummaryPeriod: ExpressibleByArgument {}

extension Vaultctl {
    struct Summary: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "summary",
            abstract: "Per-period totals (cumulative metrics, deduplicated across sources) or average/min/max (discrete metrics).")

        @OptionGroup var vault: VaultOptions

        @Argument(help: ArgumentHelp("A short name (steps, active-energy, heart-rate, ...) or a HealthKit identifier.", valueName: "METRIC"))
        var metric: String

        @OptionGroup var range: DayRange

        @Option(help: "Group by day, ISO week, two weeks (ending on the range's last day) or month.")
        var by: SummaryPeriod = .day

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var period: String
            var value: Double
            var unit: String
            var samples: Int
            var min: Double?
            var max: Double?
        }

        func execute() throws {
            let rows = try vault.openWithProjections().summary(metric: metric, by: by, from: range.from, to: range.to)
            if json {
                try Console.json(rows.map {
                    Output(period: $0.period, value: Self.rounded($0.value), unit: $0.unit, samples: $0.samples,
                           min: $0.min, max: $0.max)
                })
                return
            }
            if rows.isEmpty { Console.note("no \(metric) samples in this range"); return }
            let discrete = rows.contains { $0.min != nil }
            Console.print(discrete ? "period      average  min  max  (unit, samples)" : "period      total  (unit, samples)")
            for row in rows {
                let figures = discrete
                    ? "\(Rings.number(row.value))  \(row.min.map(Rings.number) ?? "-")  \(row.max.map(Rings.number) ?? "-")"
                    : Rings.number(row.value)
                Console.print("\(row.period.padding(toLength: 10, withPad: " ", startingAt: 0))  \(figures)  (\(row.unit), \(row.samples))")
            }
        }

        /// Totals keep three decimals: enough for kilometres and litres, no float noise in JSON.
        static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
    }
}
