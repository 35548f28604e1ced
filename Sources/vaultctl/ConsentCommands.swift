import ArgumentParser
import Foundation
import HealthModel
import Vault

extension Granularity: ExpressibleByArgument {}

extension Vaultctl {
    struct Grant: VaultCommand {
        static let configuration = CommandConfiguration(commandName: "grant", abstract: "Record consent for a researcher: which categories, which days, at what detail.")

        @OptionGroup var vault: VaultOptions
        @Argument(help: "The recipient.") var name: String
        @Option(help: ArgumentHelp("Categories: \(HealthCategory.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "C[,C...]"))
        var categories: String
        @OptionGroup var range: DayRange
        @Option(help: "raw (every sample), hourly or daily (aggregates as `summary` computes them).") var granularity: Granularity = .daily
        @Option(help: ArgumentHelp("Last day the consent is in force.", valueName: "YYYY-MM-DD")) var expires: LocalDay?
        @Option(help: "What the data is for.") var purpose: String?

        func execute() throws {
            let opened = try vault.openForWriting()
            let grant = try opened.grant(recipient: name, categories: try HealthCategory.parseList(categories), from: range.from, to: range.to,
                                         granularity: granularity, expires: expires, purpose: purpose)
            Console.print("granted \(name): \(grant.categories.map(\.rawValue).joined(separator: ",")) \(grant.granularity.rawValue), data \(grant.from?.description ?? "any") to \(grant.to?.description ?? "any"), expires \(grant.expires?.description ?? "never") (consent \(grant.id))")
            if grant.categories.contains(.other) {
                Console.print("other holds (an export shares these, and no type that arrives later: grant again for those): " + Consents.describe(try opened.typesHeld(in: .other)))
            }
        }
    }

    struct Revoke: VaultCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Withdraw consent: all of it, or some categories.")

        @OptionGroup var vault: VaultOptions
        @Argument(help: "The recipient.") var name: String
        @Option(help: ArgumentHelp("Only these categories.", valueName: "C[,C...]")) var categories: String?

        func execute() throws {
            let opened = try vault.openForWriting()
            try opened.revoke(recipient: name, categories: try categories.map(HealthCategory.parseList))
            Console.print("revoked \(categories ?? "all consent") for \(name)")
        }
    }

    struct Consents: VaultCommand {
        static let configuration = CommandConfiguration(commandName: "consents", abstract: "Consents in force, or with --history every grant and revocation.")

        @OptionGroup var vault: VaultOptions
        @Flag(help: "Every change, oldest first.") var history = false
        @Flag(help: "Print one JSON document on stdout.") var json = false

        struct Output: Encodable {
            var recipient: String
            var categories: [String]
            var from: String?
            var to: String?
            var granularity: String?
            var expires: String?
            var purpose: String?
            var grantedAt: String?
            var revokedAt: String?
            var id: String?
            var change: String?
            /// For a consent in force that covers `other`: the types it holds now.
            var otherHolds: [HeldType]?
            /// Types held under `other` that came after the grant: not shared without a new one.
            var otherNotGranted: [String]?

            struct HeldType: Encodable { var type: String; var count: Int }

            enum Keys: String, CodingKey {
                case recipient, categories, from, to, granularity, expires, purpose, grantedAt, revokedAt, id, change, otherHolds, otherNotGranted
            }

            /// The spec's fields always, null when absent; the history's extra fields only when set.
            func encode(to encoder: Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                try c.encode(recipient, forKey: .recipient)
                try c.encode(categories, forKey: .categories)
                try c.encode(from, forKey: .from)
                try c.encode(to, forKey: .to)
                try c.encode(granularity, forKey: .granularity)
                try c.encode(expires, forKey: .expires)
                try c.encode(purpose, forKey: .purpose)
                try c.encode(grantedAt, forKey: .grantedAt)
                try c.encodeIfPresent(revokedAt, forKey: .revokedAt)
                try c.encodeIfPresent(id, forKey: .id)
                try c.encodeIfPresent(change, forKey: .change)
                try c.encodeIfPresent(otherHolds, forKey: .otherHolds)
                try c.encodeIfPresent(otherNotGranted, forKey: .otherNotGranted)
            }

            init(_ grant: ConsentGrant, categories: [HealthCategory], change: String? = nil) {
                let iso = ISO8601DateFormatter()
                recipient = grant.recipient
                self.categories = categories.map(\.rawValue)
                from = grant.from?.description
                to = grant.to?.description
                granularity = grant.granularity.rawValue
                expires = grant.expires?.description
                purpose = grant.purpose
                grantedAt = iso.string(from: grant.at)
                id = grant.id
                self.change = change
            }

            init(_ revocation: ConsentRevocation) {
                recipient = revocation.recipient
                categories = revocation.categories?.map(\.rawValue) ?? HealthCategory.allCases.map(\.rawValue)
                revokedAt = ISO8601DateFormatter().string(from: revocation.at)
                change = "revoke"
            }
        }

        /// `HKQuantityTypeIdentifierUVExposure (12), NoiseLevel (3)`, or that it is empty.
        static func describe(_ held: [(type: String, count: Int)]) -> String {
            held.isEmpty ? "nothing yet" : held.map { "\($0.type) (\($0.count))" }.joined(separator: ", ")
        }

        func execute() throws {
            let opened = try Vault.open(at: vault.directory, passphrase: try vault.passphrase())
            let ledger = try opened.consentLedger()
            var rows: [Output]
            if history {
                rows = ledger.changes.map { change in
                    switch change {
                    case .granted(let g): Output(g, categories: g.categories, change: "grant")
                    case .revoked(let r): Output(r)
                    }
                }
            } else {
                let inForce = ledger.allInForce(on: .today())
                rows = inForce.map { Output($0.grant, categories: $0.categories) }
                if rows.contains(where: { $0.categories.contains(HealthCategory.other.rawValue) }) {
                    let held = try opened.typesHeld(in: .other).map { Output.HeldType(type: $0.type, count: $0.count) }
                    for (i, entry) in inForce.enumerated() where rows[i].categories.contains(HealthCategory.other.rawValue) {
                        // What an export shares: the types the grant listed; later ones need a new grant.
                        let listed = entry.grant.otherTypes.map(Set.init)
                        rows[i].otherHolds = held.filter { listed?.contains($0.type) ?? true }
                        let unlisted = held.filter { !(listed?.contains($0.type) ?? true) }.map(\.type)
                        if !unlisted.isEmpty { rows[i].otherNotGranted = unlisted }
                    }
                }
            }
            if json { try Console.json(rows); return }
            if rows.isEmpty { Console.note(history ? "no consent was ever given" : "no consent is in force") }
            for row in rows {
                if row.change == "revoke" {
                    Console.print("\(row.revokedAt ?? "")  revoke  \(row.recipient): \(row.categories.joined(separator: ","))")
                } else {
                    Console.print("\(row.grantedAt ?? "")  \(history ? "grant  " : "")\(row.recipient): \(row.categories.joined(separator: ",")) \(row.granularity ?? ""), data \(row.from ?? "any") to \(row.to ?? "any"), expires \(row.expires ?? "never")\(row.purpose.map { ", purpose: \($0)" } ?? "")")
                    if let held = row.otherHolds {
                        Console.print("    other holds: " + Self.describe(held.map { ($0.type, $0.count) }))
                    }
                    if let later = row.otherNotGranted {
                        Console.print("    other, not granted (came after the grant; grant again to share): " + later.joined(separator: ", "))
                    }
                }
            }
        }
    }
}
