import ArgumentParser
import Foundation
import HealthModel
import Report
import ResearchBundle
import Vault

extension Vaultctl {
    struct ReportCommand: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Write one self-contained HTML report (rings, calendars, streaks, trends, charts, sleep, workouts, trackers).",
            discussion: """
                The file holds health data in plain text (mode 0600); it is refused inside the vault directory and over an existing \
                file. With --bundle DIR (a directory `bundle open` wrote) a researcher gets the same pictures from the bundle's \
                daily lines, and no vault is opened.
                """)

        @OptionGroup var vault: VaultOptions
        @Option(help: ArgumentHelp("The HTML file to write.", valueName: "FILE.html")) var out: String
        @Option(help: ArgumentHelp("Draw an opened bundle's daily lines instead of the vault.", valueName: "DIR")) var bundle: String?
        @OptionGroup var range: DayRange

        func execute() throws {
            let report: HealthReport.Rendered
            let target: String
            if let bundle {
                let opened = try OpenedBundleDirectory(path: bundle)
                guard !opened.dailyLines.isEmpty else {
                    throw BundleError.refused(path: bundle, reason: "holds no daily lines (its grants were raw or hourly); the report draws daily figures")
                }
                target = URL(fileURLWithPath: out).standardizedFileURL.path
                report = try HealthReport.render(bundleLines: opened.dailyLines, sender: opened.sender, from: range.from, to: range.to)
            } else {
                let opened = try vault.openWithProjections()
                target = try opened.plaintextTarget(out)
                report = try HealthReport.render(vaultFigures: ReportFigures(vault: opened), from: range.from, to: range.to)
            }
            try Self.write(Data(report.html.utf8), to: target)
            // The range drawn: without --from/--to, the year ending on the last day with data.
            Console.print("wrote \(out) (\(report.html.utf8.count) bytes), \(report.first) to \(report.last)"
                          + (range.to == nil ? " (the year to the last day with data; --from/--to choose another)" : ""))
        }

        /// Writes `data` to a new file at `target` (mode 0600), whole or not at all: through a
        /// temporary name in the same folder, synced, then linked to `target` (which refuses a
        /// name that exists) and the temporary removed. A failure leaves nothing behind.
        static func write(_ data: Data, to target: String) throws {
            let folder = (target as NSString).deletingLastPathComponent
            let temporary = folder + "/.report-\(UUID().uuidString).tmp"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw VaultError.cannotWrite(path: target, reason: String(cString: strerror(errno))) }
            defer { unlink(temporary) }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            do {
                try handle.write(contentsOf: data)
                try handle.synchronize()
            } catch {
                throw VaultError.cannotWrite(path: target, reason: error.localizedDescription)
            }
            guard link(temporary, target) == 0 else {
                throw errno == EEXIST ? VaultError.fileExists(path: target) : VaultError.cannotWrite(path: target, reason: String(cString: strerror(errno)))
            }
            let directory = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
        }
    }
}
