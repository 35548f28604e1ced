import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct Tracker: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "tracker",
            abstract: "Habits logged by hand, with levels (`vaultctl track NAME LEVEL`).", subcommands: [Add.self, List.self, Days.self],
            defaultSubcommand: List.self)

        func execute() throws {}

        struct Add: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "add", abstract: "Define a tracker (or define it again from now on).")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "The tracker's name.") var name: String
            @Option(help: ArgumentHelp("Levels and their values, e.g. steady=0,easy=4,wild=6.", valueName: "L=V[,L=V...]")) var levels: String
            @Option(help: ArgumentHelp("Levels that count as a success for streaks.", valueName: "L[,L...]")) var success: String?
            @Option(help: ArgumentHelp("When a tracker day starts: an entry before it belongs to the day before.", valueName: "HH:MM"))
            var dayStarts = "00:00"
            @Option(help: ArgumentHelp("The HealthKit type the tracker stands for (its consent category is that type's).", valueName: "TYPE"))
            var healthkit: String?

            func execute() throws {
                var parsed: [TrackerLevel] = []
                for item in levels.split(separator: ",") {
                    let parts = item.split(separator: "=", maxSplits: 1)
                    let number = Array(String(parts.count == 2 ? parts[1] : "").trimmingCharacters(in: .whitespaces).utf8)
                    guard parts.count == 2, let value = number.withUnsafeBytes({ DecimalValue.parse($0) }), value.double.isFinite else {
                        throw ValidationError("--levels takes name=value pairs separated by commas, not '\(item)'")
                    }
                    parsed.append(TrackerLevel(name: String(parts[0]).trimmingCharacters(in: .whitespaces), value: value))
                }
                let minutes = try Self.minutes(dayStarts)
                let opened = try vault.openForWriting()
                let made = try opened.addTracker(name: name, levels: parsed, success: success.map { $0.split(separator: ",").map(String.init) } ?? [],
                                                 dayStartsMinutes: minutes, healthKitType: healthkit)
                Console.print("tracker '\(made.name)' defined: \(made.levels.map { "\($0.name)=\($0.value)" }.joined(separator: ", ")) (consent category \(made.category.rawValue))")
            }

            static func minutes(_ text: String) throws -> Int {
                let parts = text.split(separator: ":")
                guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else {
                    throw ValidationError("--day-starts takes HH:MM, not '\(text)'")
                }
                return h * 60 + m
            }
        }

        struct List: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the trackers.")
            @OptionGroup var vault: VaultOptions
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable {
                var name: String
                var levels: [String: Double]
                var success: [String]
                var dayStarts: String
                var healthkit: String?
                var category: String
            }

            func execute() throws {
                let trackers = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).trackers()
                let rows = trackers.map { t in
                    Output(name: t.name, levels: Dictionary(t.levels.map { ($0.name, $0.value.double) }, uniquingKeysWith: { a, _ in a }),
                           success: t.success, dayStarts: String(format: "%02d:%02d", t.dayStartsMinutes / 60, t.dayStartsMinutes % 60),
                           healthkit: t.healthKitType, category: t.category.rawValue)
                }
                if json {
                    try Console.json(rows)
                    return
                }
                if rows.isEmpty { Console.print("no tracker yet (`vaultctl tracker add NAME --levels L=V,...`)") }
                for (row, t) in zip(rows, trackers) {
                    Console.print("\(row.name): \(t.levels.map { "\($0.name)=\($0.value)" }.joined(separator: ", ")); success \(row.success.joined(separator: ", ")); day starts \(row.dayStarts); \(row.category)")
                }
            }
        }

        struct Days: VaultCommand {
            static let configuration = CommandConfiguration(commandName: "days", abstract: "A tracker's days: the level of each day's last entry.")
            @OptionGroup var vault: VaultOptions
            @Argument(help: "The tracker's name.") var name: String
            @OptionGroup var range: DayRange
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable { var date: String; var level: String; var value: Double }

            func execute() throws {
                let days = try Vault.open(at: vault.directory, passphrase: try vault.passphrase())
                    .trackerDays(name: name, from: range.from, to: range.to)
                let rows = days.map { Output(date: $0.day.description, level: $0.level, value: $0.value.double) }
                if json {
                    try Console.json(rows)
                    return
                }
                for row in rows { Console.print("\(row.date)  \(row.level) (\(BundleNumber.text(row.value)))") }
            }
        }
    }

    struct Track: VaultCommand {
        static let configuration = CommandConfiguration(commandName: "track", abstract: "Log a tracker's level, now or at a local time.")
        @OptionGroup var vault: VaultOptions
        @Argument(help: "The tracker's name.") var name: String
        @Argument(help: "The level.") var level: String
        @Option(help: ArgumentHelp("When, in local time (TZ).", valueName: "YYYY-MM-DD HH:MM")) var at: String?

        func execute() throws {
            let when = try Self.instant(at)
            let entry = try vault.openForWriting().track(name: name, level: level, at: when)
            Console.print("\(entry.tracker): \(entry.level) on \(entry.day)")
        }

        /// `--at`'s local time (in TZ), with the offset in force then; now when not given.
        static func instant(_ at: String?) throws -> HealthTimestamp {
            guard let at else {
                let now = Date()
                return HealthTimestamp(seconds: Int64(now.timeIntervalSince1970.rounded(.down)), utcOffset: Int32(TimeZone.current.secondsFromGMT(for: now)))
            }
            guard let parsed = LocalTime.parse(Substring(at), timeZone: .current) else {
                throw ValidationError("--at takes a local time as \"YYYY-MM-DD HH:MM\", not '\(at)'")
            }
            return parsed
        }
    }
}

/// A number as lines print it: no trailing ".0" on whole values.
enum BundleNumber {
    static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
