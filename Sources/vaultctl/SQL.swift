import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct SQL: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "sql",
            abstract: "Run one read-only SQL statement over the projections (decrypted in memory only).",
            discussion: """
            Tables and views are described in docs/projections.md (daily_summary, daily_rings, metadata_by_day, ...). \
            --write-plaintext-copy writes the whole projection database UNENCRYPTED to FILE, outside \
            the vault directory; anyone who can read FILE can read your health data.
            """)

        @OptionGroup var vault: VaultOptions

        @Argument(help: ArgumentHelp("A SELECT (or other read-only) statement.", valueName: "SQL"))
        var statement: String?

        @Option(help: ArgumentHelp("Write an unencrypted SQLite copy of the projections to FILE.", valueName: "FILE"))
        var writePlaintextCopy: String?

        @Flag(help: "Print one JSON document on stdout: an array of objects, one per row.")
        var json = false

        func validate() throws {
            if statement == nil && writePlaintextCopy == nil {
                throw ValidationError("give a SQL statement, or --write-plaintext-copy FILE")
            }
        }

        func execute() throws {
            let opened = try vault.openWithProjections()
            if let path = writePlaintextCopy {
                try opened.writePlaintextProjections(to: path)
                Console.note("wrote an UNENCRYPTED copy of the projections to \(path); it holds your health data in clear, delete it when done")
            }
            guard let statement else { return }
            let result = try opened.query(statement)
            if json {
                try Console.json(result.rows.map { row in
                    Dictionary(uniqueKeysWithValues: zip(result.columns, row.map(JSONCell.init)))
                })
                return
            }
            Console.print(result.columns.joined(separator: "|"))
            for row in result.rows { Console.print(row.map(Self.text).joined(separator: "|")) }
        }

        static func text(_ value: SQLValue) -> String {
            switch value {
            case .null: ""
            case .integer(let v): String(v)
            case .real(let v): String(v)
            case .text(let v): v
            case .blob(let v): "x'" + v.map { String(format: "%02x", $0) }.joined() + "'"
            }
        }
    }
}

/// A SQL value as JSON: numbers, strings, null; blobs as hex strings.
struct JSONCell: Encodable {
    let value: SQLValue

    init(_ value: SQLValue) { self.value = value }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .null: try container.encodeNil()
        case .integer(let v): try container.encode(v)
        case .real(let v): try container.encode(v)
        case .text(let v): try container.encode(v)
        case .blob: try container.encode(Vaultctl.SQL.text(value))
        }
    }
}
