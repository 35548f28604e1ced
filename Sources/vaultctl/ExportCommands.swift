import ArgumentParser
import Foundation
import ResearchBundle
import Vault

extension Vaultctl {
    struct Export: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a bundle holding exactly what NAME's consent covers, encrypted to them and signed by this vault.")

        @OptionGroup var vault: VaultOptions
        @Argument(help: "The recipient.") var name: String
        @Option(help: ArgumentHelp("The bundle file to write (must not exist).", valueName: "FILE")) var out: String
        @Flag(help: "Add a CSV file beside each NDJSON file.") var csv = false
        @Flag(help: "Only what no earlier bundle to NAME held; the manifest names the bundle it follows.") var sinceLast = false
        @Option(help: ArgumentHelp("ndjson (the lines), fhir (FHIR R4 Observations) or omh (Open mHealth data points).", valueName: "FORMAT"))
        var format: StandardFormat = .ndjson
        @Flag(help: "Print one JSON document on stdout.") var json = false

        struct Output: Encodable {
            var path: String
            var recipient: String
            var counts: [String: Int]
            var files: [String]
            var consents: [String]
            var bundleHash: String
            var bytes: Int
            var follows: String?
        }

        func execute() throws {
            let opened = try vault.openForWriting()
            let summary = try opened.export(to: name, path: out, csv: csv, sinceLast: sinceLast, format: format)
            if json {
                try Console.json(Output(path: summary.path, recipient: summary.recipient, counts: summary.counts, files: summary.files,
                                        consents: summary.consentIDs, bundleHash: summary.bundleHash, bytes: summary.bytes,
                                        follows: summary.follows))
                return
            }
            if let follows = summary.follows {
                Console.note("holding only what the bundle \(follows.prefix(16))… did not")
            } else if sinceLast {
                Console.note("no earlier bundle to \(name): this one holds everything the consent covers")
            }
            let counts = summary.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            Console.print("wrote \(out) for \(name): \(counts) lines, \(summary.bytes) bytes; recorded in the audit trail (BLAKE2b \(summary.bundleHash.prefix(16))…)")
        }
    }

    struct BundleCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bundle", abstract: "Researcher side: open bundles.", subcommands: [Open.self])

        struct Open: VaultCommand {
            static let configuration = CommandConfiguration(
                commandName: "open",
                abstract: "Check a bundle whole (key, signature, hashes, final chunk) and only then write its files to DIR.")

            @Argument(help: ArgumentHelp("The bundle.", valueName: "FILE")) var file: String
            @Option(help: ArgumentHelp("Your secret key file from `keygen`.", valueName: "PREFIX.key")) var key: String
            @Option(help: ArgumentHelp("Directory to write (new or empty).", valueName: "DIR")) var out: String
            @Option(help: ArgumentHelp("Refuse unless the vault's fingerprint is this one (from `vaultctl identity`).", valueName: "FPR"))
            var expectSender: String?
            @Flag(help: "Open a bundle from whichever vault signed it, without checking who that is (not recommended).")
            var anySender = false
            @Flag(help: "Print one JSON document on stdout.") var json = false

            struct Output: Encodable { var sender: String; var senderVerified: Bool; var recipient: String; var createdAt: String; var files: [String]; var counts: [String: Int] }

            func validate() throws {
                if expectSender == nil, !anySender {
                    throw ValidationError("say whose bundle you expect: --expect-sender FPR (the fingerprint the person read out from `vaultctl identity`), or --any-sender to open it without checking who signed it")
                }
                if expectSender != nil, anySender { throw ValidationError("--expect-sender and --any-sender exclude each other") }
            }

            func execute() throws {
                let opened = try BundleReader.open(file, keyFile: key, outputDirectory: out, expectSender: expectSender)
                if expectSender == nil {
                    Console.note("warning: sender not checked (--any-sender); compare \(opened.senderFingerprint) with the one the person gave you")
                }
                if json {
                    try Console.json(Output(sender: opened.senderFingerprint, senderVerified: expectSender != nil, recipient: opened.recipient,
                                            createdAt: opened.createdAt, files: opened.files, counts: opened.counts))
                    return
                }
                let who = expectSender == nil ? "signed by \(opened.senderFingerprint) (sender not checked)" : "verified bundle from \(opened.senderFingerprint)"
                Console.print("\(who) made \(opened.createdAt); wrote \(opened.files.map { out + "/" + $0 }.joined(separator: ", "))")
            }
        }
    }

    struct History: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "The audit trail: imports, goal and consent changes, exports (no sample values).")

        @OptionGroup var vault: VaultOptions
        @Flag(help: "Print one JSON document on stdout.") var json = false

        struct Output: Encodable {
            var seq: UInt64
            var at: String
            var kind: String
            var detail: [String: String]
        }

        func execute() throws {
            let events = try Vault.open(at: vault.directory, passphrase: try vault.passphrase()).history()
            let iso = ISO8601DateFormatter()
            let rows = events.map { Output(seq: $0.index, at: $0.event.date.map(iso.string) ?? "", kind: $0.event.kind, detail: Self.detail($0.event)) }
            if json { try Console.json(rows); return }
            for row in rows {
                Console.print("#\(row.seq)  \(row.at)  \(row.kind)  " + row.detail.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            }
        }

        static func detail(_ event: VaultEvent) -> [String: String] {
            switch event {
            case .vaultCreated(_, let kdf): ["kdf": kdf]
            case .importRecorded(_, let r):
                ["file": r.file, "format": r.format, "added": "\(r.added)", "duplicates": "\(r.duplicates)", "rejected": "\(r.rejected)"]
                    .merging(r.replaced > 0 ? ["replaced": "\(r.replaced)"] : [:]) { a, _ in a }
            case .goalSet(let g): ["ring": g.ring.rawValue, "value": g.value.description, "from": g.from.description]
            case .sourceOrderSet(_, let keys): ["order": keys.map(\.name).joined(separator: ", ")]
            case .recipientAdded(let r): ["recipient": r.name]
            case .consentGranted(let g):
                ["recipient": g.recipient, "consent": g.id, "categories": g.categories.map(\.rawValue).joined(separator: ","),
                 "granularity": g.granularity.rawValue, "from": g.from?.description ?? "", "to": g.to?.description ?? "",
                 "expires": g.expires?.description ?? ""]
            case .consentRevoked(let r): ["recipient": r.recipient, "categories": r.categories?.map(\.rawValue).joined(separator: ",") ?? "all"]
            case .exportPerformed(let e):
                ["recipient": e.recipient, "consents": e.consentIDs.joined(separator: ","), "bundleHash": e.bundleHash,
                 "counts": e.counts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")]
            case .identityRecorded(let i): ["reason": i.reason.rawValue, "fingerprint": i.fingerprint]
            case .erased(let e): ["categories": e.categories.joined(separator: ","), "months": e.months.joined(separator: ","), "events": "\(e.events)"]
            case .tailCut(let c): ["offset": "\(c.offset)", "length": "\(c.length)", "blake2b": c.digest, "keptAs": c.keptAs]
            case .companionPaired(let p): ["app": p.name]
            case .companionRevoked(let r): ["app": r.name]
            case .trackerDefined(let t):
                ["tracker": t.name, "levels": t.levels.map { "\($0.name)=\($0.value)" }.joined(separator: ","), "success": t.success.joined(separator: ","),
                 "dayStarts": String(format: "%02d:%02d", t.dayStartsMinutes / 60, t.dayStartsMinutes % 60), "category": t.category.rawValue]
            case .exerciseDefined(let d):
                ["exercise": d.exercise.name, "bodyParts": d.exercise.bodyParts.map(\.rawValue).joined(separator: ","),
                 "motion": d.exercise.motion.rawValue]
            default: [:]
            }
        }
    }
}

extension StandardFormat: ExpressibleByArgument {}
