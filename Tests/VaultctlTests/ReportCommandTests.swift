import Foundation
import SyntheticHealth
import Testing

/// `vaultctl report` as a person opens it: a real headless Chromium (Debian's) loads the file
/// with the network off, the rings of a known day have the arc lengths their values give, and a
/// screenshot is written.
@Suite struct ReportCommandTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs Chromium headless with every network request sent to a closed port and every name
    /// unresolvable; returns its stdout.
    func chromium(_ arguments: [String]) throws -> String {
        let binary = try #require(Self.chromium, "Debian's chromium is needed (scripts/ensure-deps.sh installs it)")
        let process = Process(), out = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=http://127.0.0.1:9",
                             "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + NSTemporaryDirectory() + "hv-chromium-\(UUID().uuidString)"] + arguments
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func aReportLoadsOfflineAndItsRingsHaveTheArcsTheirValuesGive() throws {
        let dir = TemporaryDirectory()
        let cli = CLIRunner()
        let pass = dir.passphraseFile("pass", "report passphrase")
        let vault = dir.file("vault")
        func run(_ arguments: [String]) throws -> CLIRunner.Result {
            try cli.run(arguments + ["--vault", vault, "--passphrase-file", pass])
        }
        #expect(try run(["init", "--kdf", "interactive"]).status == 0)
        let zip = dir.file("export.zip")
        try SyntheticExport.writeZip(to: zip, options: .init(days: 40, firstDay: (2024, 2, 1), tripStart: 100))
        #expect(try run(["import", zip]).status == 0)
        #expect(try run(["tracker", "add", "NoAlc", "--levels", "steady=0,wild=6", "--success", "steady"]).status == 0)
        #expect(try run(["track", "NoAlc", "steady", "--at", "2024-03-10 21:00"]).status == 0)

        let html = dir.file("report.html")
        let made = try run(["report", "--out", html])
        #expect(made.status == 0)
        let text = try String(contentsOfFile: html, encoding: .utf8)
        for outside in ["http://", "https://", "<script", "src=", "@import", "url("] { #expect(!text.contains(outside), "\(outside)") }
        #expect(text.contains("NoAlc"))
        #expect((try FileManager.default.attributesOfItem(atPath: html)[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        // The last day's rings, from the read models, against the arcs Chromium laid out.
        let ringsJSON = try run(["rings", "--json"])
        let days = try #require(try JSONSerialization.jsonObject(with: Data(ringsJSON.stdout.utf8)) as? [[String: Any]])
        let last = try #require(days.last)
        let date = try #require(last["date"] as? String)
        let dom = try chromium(["--dump-dom", "file://" + html])
        #expect(dom.contains("Your health"))
        for (ring, value, goal, radius) in [("move", "move", "moveGoal", 80.0), ("exercise", "exercise", "exerciseGoal", 59.0), ("stand", "stand", "standGoal", 38.0)] {
            let fraction = (last[value] as? Double ?? 0) / (last[goal] as? Double ?? 1)
            let expected = (min(fraction, 1) * 2 * Double.pi * radius * 1000).rounded() / 1000
            let pattern = #"data-day="\#(date)" data-ring="\#(ring)" data-lap="1" cx="90" cy="90" r="\#(Int(radius))"[^>]*stroke-dasharray="([0-9.]+) "#
            let match = try #require(dom.range(of: pattern, options: .regularExpression), "\(ring) arc of \(date)")
            let dash = dom[match].split(separator: "\"").last.map(String.init) ?? ""
            #expect(Double(dash.split(separator: " ").first ?? "") == expected, "\(ring): \(dash) against \(expected)")
        }
        let screenshot = dir.file("report.png")
        _ = try chromium(["--screenshot=" + screenshot, "--window-size=1000,2000", "file://" + html])
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.count > 20_000)
        #expect(png.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))

        // Plain text health data: never over a file, never inside the vault.
        #expect(try !FileManager.default.contentsOfDirectory(atPath: dir.path).contains { $0.hasPrefix(".report-") })
        #expect(try run(["report", "--out", html]).stderr.contains("already exists"))
        #expect(try run(["report", "--out", vault + "/report.html"]).stderr.contains("inside the vault directory"))
    }

    @Test func textFromTheVaultCannotBecomeMarkupAndHugeValuesDoNotStopTheReport() throws {
        let dir = TemporaryDirectory()
        let cli = CLIRunner()
        let pass = dir.passphraseFile("pass", "report passphrase")
        func run(_ arguments: [String]) throws -> CLIRunner.Result {
            try cli.run(arguments + ["--vault", dir.file("vault"), "--passphrase-file", pass])
        }
        #expect(try run(["init", "--kdf", "interactive"]).status == 0)
        // A prepend character joins the `<` after it into one grapheme cluster.
        let name = "\u{0D4E}<b>x"
        #expect(try run(["tracker", "add", name, "--levels", "\u{0D4E}<i>=1", "--success", "\u{0D4E}<i>"]).status == 0)
        #expect(try run(["track", name, "\u{0D4E}<i>", "--at", "2024-03-10 21:00"]).status == 0)
        let csv = dir.file("huge.csv")
        try Data("""
            type,start,end,value,unit,source
            HKQuantityTypeIdentifierActiveEnergyBurned,2024-03-10T08:00:00+00:00,2024-03-10T09:00:00+00:00,1e19,kcal,Phone

            """.utf8).write(to: URL(fileURLWithPath: csv))
        #expect(try run(["import", csv]).status == 0)
        let html = dir.file("report.html")
        let made = try run(["report", "--out", html, "--from", "2024-03-01", "--to", "2024-03-31"])
        #expect(made.status == 0, "\(made.stderr)")
        let text = try String(contentsOfFile: html, encoding: .utf8)
        #expect(!text.contains("<b>") && !text.contains("<i>"))
        #expect(text.contains("&lt;b&gt;x"))
    }
}
