import ArgumentParser
import CompanionClient
import CompanionServer
import Foundation
import HealthModel
import Report
import ResearchBundle
import StudyStore
import Vault

extension Vaultctl {
    struct Demo: VaultCommand {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "Run the whole flow in a fresh temporary vault, printing each step.")

        @Flag(help: "Keep the temporary vault instead of deleting it at the end.")
        var keep = false

        @Option(help: "Days of generated data to import.")
        var days = 30

        func execute() throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("healthvault-demo-\(UUID().uuidString.prefix(8))").path
            defer {
                if keep { Console.print("kept the demo vault at \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
            }
            // Random passphrases that are never printed: the demo shows the flow, not secrets.
            let first = randomPassphrase()
            let second = randomPassphrase()
            let inputs = try DemoInputs()
            Console.print("healthvault demo in \(directory)")

            try step("init: master key wrapped with Argon2id (interactive preset)") {
                _ = try Vault.create(at: directory, passphrase: first, kdf: KDFPreset.interactive.parameters, kdfName: "interactive")
                return "created; files: " + (try FileManager.default.contentsOfDirectory(atPath: directory).sorted().joined(separator: ", "))
            }
            let export = directory + "-export.zip"
            defer { try? FileManager.default.removeItem(atPath: export) }
            try step("generate: \(days) days of synthetic Apple Health data (iPhone + Watch, DST, a trip, runs with routes)") {
                let summary = try inputs.export(days: days, tripStart: days / 2, to: export)
                return "\(summary.records) records, \(summary.routeFiles) route files, \(summary.xmlBytes / 1_000_000) MB of XML"
            }
            try step("import export.zip") {
                let report = try Vault.open(at: directory, passphrase: first, mode: .readWrite).importFiles([export])
                return "added \(report.added), duplicates \(report.duplicates), rejected \(report.rejected)"
            }
            try step("import it again: nothing is added twice") {
                let report = try Vault.open(at: directory, passphrase: first, mode: .readWrite).importFiles([export])
                return "added \(report.added), duplicates \(report.duplicates)"
            }
            try step("projections: read models rebuilt from the log into projections.db, encrypted page by page") {
                let vault = try Vault.open(at: directory, passphrase: first)
                let rebuild = try vault.rebuildProjections()
                return "\(rebuild.inputs) events projected in \(String(format: "%.2f", rebuild.seconds)) s"
            }
            try step("rings: the last 7 days, computed from the samples beside Apple's own summary (* = closed)") {
                let rings = try Vault.open(at: directory, passphrase: first).rings().suffix(7)
                return rings.map { day in
                    func mark(_ ring: Ring) -> String { day.closed(ring) ? "*" : "" }
                    return "\(day.day) move \(Rings.number(day.move))/\(Rings.number(day.moveGoal))\(mark(.move)) (Apple \(day.apple?.move.map(Rings.number) ?? "-")), "
                        + "exercise \(Rings.number(day.exercise))/\(Rings.number(day.exerciseGoal))\(mark(.exercise)), stand \(day.stand)/\(Rings.number(day.standGoal))\(mark(.stand))"
                }.joined(separator: "\n    ")
            }
            try step("steps per ISO week, iPhone and Watch deduplicated") {
                try Vault.open(at: directory, passphrase: first).summary(metric: "steps", by: .week)
                    .map { "\($0.period) \(Rings.number($0.value))" }.joined(separator: ", ")
            }
            try step("types: everything the vault holds, by category, with counts and days") {
                let types = try Vault.open(at: directory, passphrase: first).heldTypes()
                return types.map { "\($0.category.rawValue) \(ShortNames.short(for: $0.type) ?? $0.type) \($0.count)" }.joined(separator: ", ")
            }
            try step("sleep: the last 3 nights, Watch stages before the phone's time in bed") {
                try Vault.open(at: directory, passphrase: first).sleep().suffix(3).map {
                    "\($0.night) asleep \(Int($0.asleep.rounded())) min (core \(Int($0.core.rounded())), deep \(Int($0.deep.rounded())), REM \(Int($0.rem.rounded()))), in bed \(Int($0.inBed.rounded()))"
                }.joined(separator: "\n    ")
            }
            try step("workouts per two weeks, ending on the last day") {
                try Vault.open(at: directory, passphrase: first).workouts(by: .twoWeeks).map {
                    "\($0.period) \(Workouts.kind($0.type)) \($0.count)x \(Int($0.minutes.rounded())) min \(Int($0.distance.rounded())) m"
                }.joined(separator: ", ")
            }
            try step("goals set move 1000 from the last week on, then streaks") {
                let vault = try Vault.open(at: directory, passphrase: first, mode: .readWrite)
                guard let last = try vault.rings().last else { return "no ring data" }
                try vault.setGoal(.move, value: 1000, from: LocalDay(dayNumber: last.day.dayNumber - 6))
                let streaks = try vault.streaks()
                return [("move", streaks.move), ("exercise", streaks.exercise), ("stand", streaks.stand), ("all three", streaks.all)]
                    .map { Streaks.describe($0.0, $0.1) }.joined(separator: "\n    ")
            }
            try step("verify: every frame authenticated, chained and matched to the head record") {
                describe(try Vault.verify(at: directory, passphrase: first))
            }
            try step("passwd: rewrap the master key under a new passphrase") {
                try Vault.changePassphrase(at: directory, from: first, to: second)
                return "keyslot replaced atomically; audit event appended"
            }
            try step("open with the old passphrase") {
                do {
                    _ = try Vault.open(at: directory, passphrase: first)
                    throw ValidationError("the old passphrase still opened the vault")
                } catch EventLogError.wrongPassphrase {
                    return "refused: \(EventLogError.wrongPassphrase)"
                }
            }
            try step("verify with the new passphrase") {
                describe(try Vault.verify(at: directory, passphrase: second))
            }
            let researcher = directory + "-researcher"
            defer { try? FileManager.default.removeItem(atPath: researcher) }
            try FileManager.default.createDirectory(atPath: researcher, withIntermediateDirectories: true)
            try step("researcher: keygen writes lab.pub (to give) and lab.key (0600, to keep)") {
                try RecipientKeyFiles.generate(prefix: researcher + "/lab")
                return "wrote " + (try FileManager.default.contentsOfDirectory(atPath: researcher).sorted().joined(separator: ", "))
            }
            let fingerprint = try Vault.open(at: directory, passphrase: second).identity().fingerprint
            try step("identity: the fingerprint the person reads out to the researcher") { fingerprint }
            try step("export before any consent: refused, no file written") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                try vault.addRecipient(name: "Sleep Lab", publicKeyFile: researcher + "/lab.pub")
                do {
                    _ = try vault.export(to: "Sleep Lab", path: researcher + "/refused.bundle")
                    throw ValidationError("exported without consent")
                } catch let error as VaultError {
                    return "\(error)"
                }
            }
            let lastDay = try Vault.open(at: directory, passphrase: second).rings().last?.day ?? .today()
            let weekStart = LocalDay(dayNumber: lastDay.dayNumber - 6)
            try step("grant: activity daily and heart hourly for the last 7 days, sleep never") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                let daily = try vault.grant(recipient: "Sleep Lab", categories: [.activity], from: weekStart, to: lastDay,
                                            granularity: .daily, expires: nil, purpose: "activity study")
                let hourly = try vault.grant(recipient: "Sleep Lab", categories: [.heart], from: weekStart, to: lastDay,
                                             granularity: .hourly, expires: nil, purpose: "activity study")
                return "consents \(daily.id) and \(hourly.id), data \(weekStart) to \(lastDay)"
            }
            let bundle = researcher + "/sleep-lab.bundle"
            try step("export: encrypted to the lab's key, signed by the vault, recorded in the audit trail") {
                let summary = try Vault.open(at: directory, passphrase: second, mode: .readWrite).export(to: "Sleep Lab", path: bundle)
                return summary.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value) lines" }.joined(separator: ", ")
                    + ", \(summary.bytes) bytes"
            }
            try step("researcher: bundle open --expect-sender checks key, signature, hashes and final chunk, then writes") {
                let opened = try BundleReader.open(bundle, keyFile: researcher + "/lab.key", outputDirectory: researcher + "/out",
                                                   expectSender: fingerprint)
                let first = try String(contentsOfFile: researcher + "/out/data/activity.ndjson", encoding: .utf8)
                    .split(separator: "\n").first.map(String.init) ?? ""
                return opened.files.joined(separator: ", ") + "\n    first line: " + first
            }
            try step("erase: heart data of the first month destroyed with its key (crypto-shredding)") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                guard let first = try vault.summary(metric: "heart-rate", by: .month).first else { return "no heart data" }
                guard let month = LocalMonth(parsing: first.period) else { return "no month in \(first.period)" }
                let erased = try vault.erase(categories: [.heart], from: month, to: month)
                let left = try vault.summary(metric: "heart-rate", by: .month).map(\.period)
                return "\(erased.samplesErased) events of heart for \(erased.months.joined(separator: ", ")) erased; heart-rate months left: "
                    + (left.isEmpty ? "none" : left.joined(separator: ", "))
            }
            try step("verify after the erase: the erased frames are chained and counted, not damage") {
                let report = try Vault.verify(at: directory, passphrase: second)
                return describe(report) + ", \(report.erasedFrames) frames erased (\(report.erasedEvents) events)"
            }
            try step("import the export again: the erased month is refused, not brought back") {
                let report = try Vault.open(at: directory, passphrase: second, mode: .readWrite).importFiles([export])
                return "added \(report.added), duplicates \(report.duplicates), erased \(report.erased)"
            }
            try step("companion pair + serve: a phone posts over TLS (certificate pinned), then posts an hour again with a new value") {
                // The day after the imported data, so the report's year holds both.
                try companionRoundTrip(directory: directory, passphrase: second, day: LocalDay(dayNumber: lastDay.dayNumber + 1).description)
            }
            try step("tracker NoAlc (steady=0, easy=4, wild=6; the day starts at 04:00): an entry at 01:30 counts for the day before") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                let levels = [("steady", 0), ("easy", 4), ("wild", 6)].map { TrackerLevel(name: $0.0, value: DecimalValue(mantissa: Int64($0.1), scale: 0)) }
                _ = try vault.addTracker(name: "NoAlc", levels: levels, success: ["steady"], dayStartsMinutes: 4 * 60)
                let zone = TimeZone(identifier: "Europe/Berlin")!
                // The last five days of the imported data.
                func date(_ back: Int64) -> String { LocalDay(dayNumber: lastDay.dayNumber - back).description }
                for (at, level) in [(date(4) + " 21:00", "steady"), (date(3) + " 21:00", "steady"), (date(1) + " 01:30", "wild"),
                                    (date(1) + " 21:00", "steady"), (date(0) + " 20:00", "steady")] {
                    try vault.track(name: "NoAlc", level: level, at: LocalTime.parse(Substring(at), timeZone: zone)!)
                }
                let days = try vault.trackerDays(name: "NoAlc").map { "\($0.day) \($0.level)" }.joined(separator: ", ")
                let streak = try vault.trackerStreak(name: "NoAlc")
                return days + "\nstreak: current \(streak.current), longest \(streak.longest)"
            }
            try step("training (SoFit): sets of push-ups, squats and a plank beside the imported runs; two-week shares per body part and motion") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                let zone = TimeZone(identifier: "Europe/Berlin")!
                for back in [0, 2, 4] {
                    let date = LocalDay(dayNumber: lastDay.dayNumber - Int64(back)).description
                    try vault.practice(name: "push-ups", repetitions: 20, seconds: 90, at: LocalTime.parse(Substring(date + " 07:30"), timeZone: zone)!)
                    try vault.practice(name: "squats", repetitions: 25, seconds: 120, at: LocalTime.parse(Substring(date + " 07:35"), timeZone: zone)!)
                    try vault.practice(name: "plank", repetitions: 1, seconds: 60, at: LocalTime.parse(Substring(date + " 07:40"), timeZone: zone)!)
                }
                return try vault.trainingStats(by: .twoWeeks).suffix(2).map { period in
                    "\(period.period): \(period.sets) sets, \(period.repetitions) reps, \(period.workouts) workouts, \(Rings.number(period.minutes)) min"
                        + "\n      body parts: " + Stats.percentages(period.bodyParts) + "\n      motion: " + Stats.percentages(period.motion)
                }.joined(separator: "\n    ")
            }
            try step("a watch's FIT file of a run the export already holds (as if Garmin Connect had synced it): one run, not two") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                var last: Workout?
                try vault.forEachEvent { _, event in
                    if case .workout(let w) = event, w.activityType == "HKWorkoutActivityTypeRunning" { last = w }
                }
                guard let run = last else { return "no run in the export" }
                let fit = directory + "-run.fit"
                defer { try? FileManager.default.removeItem(atPath: fit) }
                let seconds = Int(run.end.seconds - run.start.seconds)
                try inputs.fitActivity(start: run.start.seconds, seconds: seconds, utcOffset: run.start.utcOffset, to: fit)
                func runs() throws -> Int { try vault.workouts(by: .month).filter { $0.type == "HKWorkoutActivityTypeRunning" }.reduce(0) { $0 + $1.count } }
                let before = try runs()
                let report = try vault.importFiles([fit])
                return "the FIT file brought \(report.added) events (the run, its route, heart rate and speed each second); "
                    + "runs: \(before) before, \(try runs()) after: the same run from two sources counts once"
            }
            let report = directory + "-report.html"
            try step("report: one self-contained HTML file (rings, calendars, streaks, trends, charts, sleep, workouts, training, trackers)") {
                let vault = try Vault.open(at: directory, passphrase: second)
                try? FileManager.default.removeItem(atPath: report)
                let html = try HealthReport.render(vaultFigures: ReportFigures(vault: vault)).html
                try Data(html.utf8).write(to: URL(fileURLWithPath: report))
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: report)
                return "wrote \(report) (\(html.utf8.count) bytes); open it in any browser, offline"
            }
            let backupDirectory = directory + "-backup", restoredDirectory = directory + "-restored"
            defer {
                for path in [backupDirectory, restoredDirectory] where !keep { try? FileManager.default.removeItem(atPath: path) }
            }
            try step("backup: the vault's ciphertext copied to a backup directory (a USB disk, a NAS), nothing readable") {
                let run = try Vault.open(at: directory, passphrase: second).backup(to: backupDirectory)
                return "\(run.position) events, \(run.bytesWritten) bytes to \(backupDirectory)"
            }
            let nightsBefore = try Vault.open(at: directory, passphrase: second).sleep()
            let sleepMonths = nightsBefore.map { LocalMonth($0.night) }
            try step("erase the first month of sleep: the backup holds its key until its next run") {
                let vault = try Vault.open(at: directory, passphrase: second, mode: .readWrite)
                guard let month = sleepMonths.first else { return "no sleep data" }
                let erased = try vault.erase(categories: [.sleep], from: month, to: month)
                let holding = try vault.backupDestinations().filter(\.holdsErasedKeys).map(\.destination)
                return "\(erased.samplesErased) events of sleep in \(month) erased; backups still holding its key: \(holding.joined(separator: ", "))"
            }
            try step("backup again: only the new frames are copied, and the erasure reaches the backup") {
                let run = try Vault.open(at: directory, passphrase: second).backup(to: backupDirectory)
                return "\(run.bytesWritten) bytes written, \(run.erasuresApplied) erased month key(s) destroyed in the backup"
            }
            try step("restore into a new directory: it answers like the original and holds nothing erased") {
                let report = try Vault.restore(from: backupDirectory, to: restoredDirectory, passphrase: second)
                let original = try Vault.open(at: directory, passphrase: second), restored = try Vault.open(at: restoredDirectory, passphrase: second)
                let same = try original.summary(metric: "steps", by: .month).map(\.value) == restored.summary(metric: "steps", by: .month).map(\.value)
                    && original.heldTypes().map(\.count) == restored.heldTypes().map(\.count)
                    && original.sleep().map(\.asleep) == restored.sleep().map(\.asleep)
                let nights = try restored.sleep()
                return "verified: \(report.events) events; steps, types and sleep \(same ? "the same as the original's" : "DIFFERENT from the original's"); "
                    + "\(nights.count) of \(nightsBefore.count) nights left (a night that began in the month before keeps that part)"
            }
            try step("audit trail (vaultctl history)") {
                let events = try Vault.open(at: directory, passphrase: second).history()
                return events.map { "#\($0.index) \($0.event.kind)" }.joined(separator: "; ")
            }
            let studyDirectory = directory + "-study"
            defer { if !keep { try? FileManager.default.removeItem(atPath: studyDirectory) } }
            var study: DemoInputs.Study?
            try step("study: three participants share with the lab (one raw, one daily only, one under a consent that expired)") {
                study = try inputs.study(in: studyDirectory, participants: 3, days: 7)
                return "\(study!.bundles.count) bundles; roster \(study!.roster)"
            }
            let database = studyDirectory + "/study.sqlite"
            try step("researcher: study load checks each bundle whole and loads it into SQLite, all or nothing") {
                let summary = try StudyLoader.load(bundles: study!.bundles, keyFile: study!.keyFile, into: .sqlite(path: database),
                                                   roster: try StudyRoster(contentsOf: study!.roster))
                return "\(summary.bundles) bundles from \(summary.participants) participants: \(summary.rows) rows, \(summary.duplicates) duplicates"
            }
            let query = """
                SELECT p.label, count(DISTINCT s.day), sum(s.value) FROM samples s JOIN participants p USING (fingerprint)
                WHERE s.type = 'HKQuantityTypeIdentifierStepCount' GROUP BY p.label ORDER BY p.label
                """
            try step("researcher: one SQL query across them (raw steps per participant): \(query.replacingOccurrences(of: "\n", with: " "))") {
                let rows = try StudyQuery.rows(sqlite: database, query)
                let daily = try StudyQuery.rows(sqlite: database, "SELECT count(*) FROM aggregates")
                return rows.map { "\($0[0]): \($0[1]) days, \(Rings.number(Double($0[2]) ?? 0)) steps" }.joined(separator: "; ")
                    + "; and \(daily.first?.first ?? "0") daily figures from the participant who shared daily only"
            }
        }

        /// Pairs an app, serves the vault on a free loopback port in this process, posts as the
        /// phone would (a batch, then one hour again with another value), reads the day's steps
        /// and stops the server.
        private func companionRoundTrip(directory: String, passphrase: Passphrase, day: String) throws -> String {
            let (token, certificate): (String, String) = try {
                let vault = try Vault.open(at: directory, passphrase: passphrase, mode: .readWrite)
                let certificate = try ServerCertificate.loadOrCreate(in: vault)
                return (try vault.pairCompanion(name: "demo phone").token, certificate.sha256)
            }()
            let listening = DispatchSemaphore(value: 0), stopped = DispatchSemaphore(value: 0)
            let port = PortBox()
            let shutdown = CompanionServer.Shutdown()
            Task {
                try? await CompanionServer(host: "127.0.0.1", port: 0, tls: true).run(directory: directory, passphrase: passphrase, shutdown: shutdown) { url in
                    port.set(Int(url.split(separator: ":").last ?? "") ?? 0)
                    listening.signal()
                }
                stopped.signal()
            }
            defer {
                shutdown.request()
                stopped.wait()
            }
            guard listening.wait(timeout: .now() + 30) == .success else { return "the server did not start" }
            let client = try CompanionClient(host: "127.0.0.1", port: port.value, pinnedSHA256: certificate)
            defer { client.close() }
            let batch = #"{"metric":"STEPS","data":[{"timeRange":"\#(day) 08:00/\#(day) 09:00","value":38},{"timeRange":"\#(day) 09:00/\#(day) 10:00","value":400}]}"#
            let again = #"{"metric":"STEPS","data":[{"timeRange":"\#(day) 08:00/\#(day) 09:00","value":52}]}"#
            let first = try client.post("/companion/health", token: token, json: batch)
            let second = try client.post("/companion/health", token: token, json: again)
            let wrong = try client.post("/companion/health", token: "hv_not-a-token", json: again)
            let total = try Vault.open(at: directory, passphrase: passphrase)
                .summary(metric: "steps", by: .day, from: LocalDay(parsing: day), to: LocalDay(parsing: day)).first?.value ?? 0
            return """
                paired 'demo phone' (certificate SHA-256 \(certificate.prefix(16))…); served at 127.0.0.1:\(port.value)
                first post \(first.status) \(first.body)
                same hour, new value \(second.status) \(second.body)
                a wrong token \(wrong.status) \(wrong.body)
                steps on \(day) while serving: \(Int(total)) (52 + 400: the new value replaced 38, not added to it)
                """
        }

        final class PortBox: @unchecked Sendable {
            private let lock = NSLock()
            private var stored = 0
            var value: Int { lock.withLock { stored } }
            func set(_ port: Int) { lock.withLock { stored = port } }
        }

        private func step(_ title: String, _ body: () throws -> String) throws {
            let started = Date()
            let outcome = try body()
            let ms = Int(Date().timeIntervalSince(started) * 1000)
            Console.print("- \(title)")
            for line in "\(outcome) (\(ms) ms)".split(separator: "\n") { Console.print("    " + line.drop { $0 == " " }) }
        }

        private func describe(_ report: VerificationReport) -> String {
            report.isOK ? "ok: \(report.frames) frames, \(report.events) events" : "DAMAGED: " + report.problems.joined(separator: "; ")
        }

        private func randomPassphrase() -> Passphrase {
            var bytes = (0..<24).map { _ in UInt8.random(in: 0x21...0x7E) }
            return Passphrase(consuming: &bytes)
        }
    }
}
