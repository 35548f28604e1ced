import ArgumentParser
import Foundation
import Vault

extension Vaultctl {
    struct Import: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Add samples from Apple Health exports, companion app JSON and CSV; data already in the vault is skipped.",
            discussion: """
                Formats, told apart by content: an Apple Health export.zip (or the export.xml in it, any iOS version; an ECG's \
                electrocardiograms/ecg_*.csv alone too); companion JSON as phones post it ({"metric":"STEPS","data":[{"timeRange":\
                "2025-08-06 08:00/2025-08-06 09:00","value":38}]}, an array of such objects, or Health Auto Export's \
                {"data":{"metrics":[...],"workouts":[...]}}); CSV with a header naming type,start,end,value (unit and source \
                optional), or daily totals: a date column and a column per metric (Date,Step Count (count)). Local times are in the \
                machine's time zone. One command is one commit: if a file fails, nothing of any is kept.
                """)

        @OptionGroup var vault: VaultOptions

        @Argument(help: ArgumentHelp("Files to import.", valueName: "FILE"))
        var files: [String]

        @Flag(help: "Print one JSON document on stdout.")
        var json = false

        @Flag(help: "Take data of categories and months that were erased (refused and counted as erased otherwise).")
        var allowErased = false

        struct Failure: Encodable { var error: String; var file: String }

        func execute() throws {
            do {
                try importFiles()
            } catch {
                // A script parsing --json gets one document on failure too; stderr has the line.
                if json {
                    let file = (error as? ImportError)?.path ?? files.first { "\(error)".contains($0) } ?? vault.directory
                    try? Console.json(Failure(error: "\(error)", file: file))
                }
                throw error
            }
        }

        private func importFiles() throws {
            let opened = try vault.openForWriting()
            let bar = ProgressBar()
            let report = try opened.importFiles(files, allowErased: allowErased) { file, done, total in bar.update(label: (file as NSString).lastPathComponent, done: done, total: total) }
            bar.finish()
            // The samples are committed; bring the read models up to date so the next read is fast.
            vault.reportProjectionNotice(of: opened, warning: opened.refreshProjections())
            if json {
                try Console.json(report)
                return
            }
            for file in report.files {
                let erased = file.erased > 0 ? ", erased \(file.erased) (of erased months; --allow-erased takes them)" : ""
                let repeats = (file.repeats > 0 ? ", \(file.repeats) correlation member(s) also listed at top level" : "")
                    + (file.replaced > 0 ? ", replaced \(file.replaced) earlier value(s) of the same source and time" : "")
                Console.print("\(file.path): added \(file.added), duplicates \(file.duplicates), rejected \(file.rejected)\(erased)\(repeats) (\(file.format))")
                for warning in file.warnings { Console.note("warning: \(file.path): \(warning)") }
            }
            if report.files.count > 1 {
                Console.print("total: added \(report.added), duplicates \(report.duplicates), rejected \(report.rejected)" + (report.erased > 0 ? ", erased \(report.erased)" : ""))
            }
            if report.rewrites > 0 {
                Console.print("rewrites: \(report.rewrites) sample(s) identical to another but for their creation date (an app wrote them again): kept, counted once in totals")
            }
        }
    }
}

/// Bytes, rate and time left on stderr, redrawn in place; silent unless stderr is a terminal.
final class ProgressBar {
    private let enabled = isatty(STDERR_FILENO) == 1
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    func update(label: String, done: Int64, total: Int64) {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = Date()
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 0
        let width = 24
        let filled = Int(fraction * Double(width))
        let eta = rate > 0 && total > done ? Double(total - done) / rate : 0
        let line = String(format: "\r%@ [%@%@] %3.0f%% %.0f/%.0f MB %.0f MB/s ETA %.0fs ", TerminalText.sanitize(label),
                          String(repeating: "#", count: filled), String(repeating: "-", count: width - filled),
                          fraction * 100, Double(done) / 1e6, Double(total) / 1e6, rate / 1e6, eta)
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    func finish() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
