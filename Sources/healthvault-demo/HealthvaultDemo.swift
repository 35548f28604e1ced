import ArgumentParser
import Foundation
import SecureMemory
import SyntheticHealth
import SyntheticStudy

/// The inputs `vaultctl demo` shows the flow on, generated: an Apple Health export, a watch's
/// FIT file, a study's bundles. A program of its own, so that the `vaultctl` a person installs
/// links no generator (`make demo` builds both; `vaultctl demo` runs this one from beside it).
/// Each command prints one JSON document on stdout saying what it wrote.
@main
struct HealthvaultDemo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthvault-demo",
        abstract: "Generate the synthetic inputs of `vaultctl demo`.",
        subcommands: [Export.self, FIT.self, Study.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a synthetic Apple Health export.zip (iPhone + Watch, DST, a trip, runs with routes).")

        @Option(help: "Days of data.") var days = 30
        @Option(help: "The day (from the first) a trip abroad starts.") var tripStart: Int?
        @Option(help: "The zip to write.") var out: String

        func run() throws {
            let summary = try SyntheticExport.writeZip(to: out, options: .init(days: days, tripStart: tripStart ?? days / 2))
            try printJSON(ExportWritten(records: summary.records, routeFiles: summary.routeFiles, xmlBytes: summary.xmlBytes))
        }
    }

    struct FIT: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "fit", abstract: "Write a synthetic FIT activity (a run at 1 Hz: route, heart rate, speed).")

        @Option(help: "Start, seconds since 1970 (UTC).") var start: Int64
        @Option(help: "Length in seconds.") var seconds: Int
        @Option(help: "The local time's offset from UTC, in seconds.") var utcOffset: Int32 = 0
        @Option(help: "The .fit file to write.") var out: String

        func run() throws {
            let bytes = SyntheticFIT.activity(start: start, seconds: seconds, utcOffset: utcOffset)
            try Data(bytes).write(to: URL(fileURLWithPath: out))
            try printJSON(["bytes": bytes.count])
        }
    }

    struct Study: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a study: participants' vaults, consents, their bundles for the lab, a roster.")

        @Option(help: "The study's directory (new).") var directory: String
        @Option(help: "Participants.") var participants = 3
        @Option(help: "Days of data each.") var days = 7

        func run() throws {
            // The participants' vaults are the generator's to open; their passphrase is never shown.
            var bytes = (0..<24).map { _ in UInt8.random(in: 0x21...0x7E) }
            let study = try SyntheticStudy.make(in: directory, participants: participants, days: days, passphrase: Passphrase(consuming: &bytes))
            try printJSON(StudyWritten(bundles: study.bundles, roster: study.roster, keyFile: study.keyPrefix + ".key"))
        }
    }
}

/// What `export` wrote.
struct ExportWritten: Codable {
    var records: Int
    var routeFiles: Int
    var xmlBytes: Int64
}

/// What `study` wrote: the bundles in order, the roster, the lab's secret key file.
struct StudyWritten: Codable {
    var bundles: [String]
    var roster: String
    var keyFile: String
}

private func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    FileHandle.standardOutput.write(try encoder.encode(value) + Data("\n".utf8))
}
