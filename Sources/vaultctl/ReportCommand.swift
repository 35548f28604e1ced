import ArgumentParser
import Foundation
import HealthModel
import Report
import Vault

extension Vaultctl {
    struct ReportCommand: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Write one self-contained HTML report (rings, calendars, streaks, trends, charts, sleep, workouts, trackers).",
            discussion: "The file holds health data in plain text (mode 0600); it is refused inside the vault directory and over an existing file.")

        @OptionGroup var vault: VaultOptions
        @Option(help: ArgumentHelp("The HTML file to write.", valueName: "FILE.html")) var out: String
        @OptionGroup var range: DayRange

        func execute() throws {
            let opened = try vault.openWithProjections()
            let target = try opened.plaintextTarget(out)
            let html = try HealthReport.render(vault: opened, from: range.from, to: range.to)
            let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw VaultError.cannotWrite(path: out, reason: String(cString: strerror(errno))) }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            try handle.write(contentsOf: Data(html.utf8))
            try handle.synchronize()
            Console.print("wrote \(out) (\(html.utf8.count) bytes)")
        }
    }
}
