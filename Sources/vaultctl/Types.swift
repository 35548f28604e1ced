import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Vaultctl {
    struct Types: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "types",
            abstract: "Every type the vault holds: how many records, from which day to which, under which consent category.")

        @OptionGroup var vault: VaultOptions

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        struct Output: Encodable {
            var type: String
            var short: String?
            var category: String
            var unit: String?
            var count: Int
            var first: String?
            var last: String?

            // Absent values are written as null, as the spec's shape has them.
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(type, forKey: .type)
                try c.encode(short, forKey: .short)
                try c.encode(category, forKey: .category)
                try c.encode(unit, forKey: .unit)
                try c.encode(count, forKey: .count)
                try c.encode(first, forKey: .first)
                try c.encode(last, forKey: .last)
            }

            enum CodingKeys: String, CodingKey { case type, short, category, unit, count, first, last }
        }

        func execute() throws {
            let rows = try vault.openWithProjections().heldTypes().map {
                Output(type: $0.type, short: ShortNames.short(for: $0.type), category: $0.category.rawValue, unit: $0.unit,
                       count: $0.count, first: $0.first?.description, last: $0.last?.description)
            }
            if json {
                try Console.json(rows)
                return
            }
            if rows.isEmpty { Console.note("the vault holds no data yet; import an export first") }
            var category = ""
            for row in rows {
                if row.category != category {
                    category = row.category
                    Console.print("\(category):")
                }
                let name = row.short.map { "\($0) (\(row.type))" } ?? row.type
                let unit = row.unit.map { ", \($0)" } ?? ""
                let span = row.first.map { first in " from \(first) to \(row.last ?? first)" } ?? ""
                Console.print("  \(name): \(row.count)\(unit)\(span)")
            }
        }
    }
}
