import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct Sleep: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "sleep",
            abstract: "Sleep per night (the local day it ends): in bed, asleep and each stage, in minutes, sources deduplicated.")

        @OptionGroup var vault: VaultOptions

        @OptionGroup var range: DayRange

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var night: String
            var start: String
            var end: String
            var inBed: Double
            var asleep: Double
            var core: Double
            var deep: Double
            var rem: Double
            var awake: Double
            var source: String
        }

        func execute() throws {
            let nights = try vault.openWithProjections().sleep(from: range.from, to: range.to).map {
                Output(night: $0.night.description, start: $0.start.iso8601, end: $0.end.iso8601, inBed: Summary.rounded($0.inBed),
                       asleep: Summary.rounded($0.asleep), core: Summary.rounded($0.core), deep: Summary.rounded($0.deep),
                       rem: Summary.rounded($0.rem), awake: Summary.rounded($0.awake), source: $0.source)
            }
            if json {
                try Console.json(nights)
                return
            }
            if nights.isEmpty { Console.note("no sleep in this range"); return }
            Console.print("night       asleep  (core deep rem)  awake  in bed  from            to               source")
            for n in nights {
                func hm(_ minutes: Double) -> String { "\(Int(minutes.rounded()) / 60)h\(String(format: "%02d", Int(minutes.rounded()) % 60))" }
                Console.print("\(n.night)  \(hm(n.asleep))  (\(hm(n.core)) \(hm(n.deep)) \(hm(n.rem)))  \(hm(n.awake))  \(hm(n.inBed))  "
                              + "\(n.start.prefix(16))  \(n.end.prefix(16))  \(n.source)")
            }
        }
    }
}
