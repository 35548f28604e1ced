import Foundation
@testable import HealthModel
@testable import Importers
import SyntheticHealth
import TestSupport
import Testing
@testable import Vault
import VaultTestSupport

/// FIT files into the vault (issue 40), their figures against Garmin's FIT SDK for Python
/// (`Tests/Fixtures/fit/oracle.json`): each session a workout with the SDK's sport, minutes,
/// distance and energy, its positions a route, a chained file's sessions all there; a monitoring
/// file's steps per day equal to the device's own daily summaries; a scale's weighings; damage
/// refused by its byte; a second import adding nothing.
@Suite struct FITImportTests {
    static var oracle: [String: [String: Any]] { FITFixtures.oracle }
    static func path(_ name: String) -> String { FITFixtures.path(name) }

    static let activities = oracle.filter { entry in
        (entry.value["errors"] as? [String])?.isEmpty == true && !((entry.value["sessions"] as? [[String: Any]]) ?? []).isEmpty
    }.keys.sorted()

    @Test(arguments: activities) func eachSessionIsAWorkoutWithTheSDKsFigures(file: String) throws {
        let expected = Self.oracle[file]!
        let sessions = expected["sessions"] as! [[String: Any]]
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.path(file)])
        #expect(report.added > 0, "\(file)")
        let workouts = try t.vault.allEvents().compactMap { event -> Workout? in
            if case .workout(let w) = event.event { return w }
            return nil
        }.sorted { $0.start.seconds < $1.start.seconds }
        #expect(workouts.count == sessions.count, "\(file)")
        for (workout, session) in zip(workouts, sessions) {
            #expect(Int(workout.start.seconds) == session["start"] as? Int, "\(file) start")
            #expect(workout.activityType == FITSports.activityType(sport: (session["sport"] as? Int).map(Int64.init),
                                                                   subSport: (session["subSport"] as? Int).map(Int64.init)), "\(file) type")
            if let timer = session["timer"] as? Double {
                #expect(abs((workout.duration?.double ?? -1) - timer / 60) < 1e-6, "\(file) minutes")
            }
            if let distance = session["distance"] as? Double {
                #expect(abs((workout.totalDistance?.double ?? -1) - distance) < 0.01, "\(file) distance")
            }
            #expect(workout.totalEnergy.map { Int($0.double) } == session["calories"] as? Int, "\(file) energy")
            if let offset = expected["localOffset"] as? Int {
                #expect(Int(workout.start.utcOffset) == offset, "\(file) local offset")
            }
        }
        // One route for a file of one session: every record with a position, first and last as the SDK read them.
        let routes = try t.vault.allEvents().compactMap { event -> WorkoutRoute? in
            if case .route(let r) = event.event { return r }
            return nil
        }
        if sessions.count == 1, let first = expected["firstPosition"] as? [Double], let last = expected["lastPosition"] as? [Double] {
            #expect(routes.count == 1 && routes[0].points.count == expected["recordsWithPosition"] as? Int, "\(file) route points")
            #expect(abs((routes.first?.points.first?.latitude ?? 0) - first[0]) < 1e-6 && abs((routes.first?.points.last?.longitude ?? 0) - last[1]) < 1e-6,
                    "\(file) route ends")
        }
        // Every record's heart rate once, as the SDK reads them (one on the boundary of two legs
        // too); a swim's, stored by the strap in hr messages, merged into the records by the SDK's rule.
        let heartRates = try t.vault.allEvents().compactMap { event -> Double? in
            if case .sample(let s) = event.event, s.type == "HKQuantityTypeIdentifierHeartRate", case .quantity(let v, _) = s.value { return v.double }
            return nil
        }
        let stored = expected["storedHeartRate"] as? [String: Int]
        #expect(heartRates.count == stored?["recordsWithHeartRate"] ?? expected["recordsWithHeartRate"] as? Int, "\(file) heart rates")
        #expect(Int(heartRates.reduce(0, +)) == stored?["heartRateSum"] ?? expected["heartRateSum"] as? Int, "\(file) heart rates' sum")
        let again = try t.vault.importFiles([Self.path(file)])
        #expect(again.added == 0 && again.duplicates == report.added, "\(file): a second import added \(again.added)")
    }

    /// A recording closed without its summary (no session, lap or activity: a flat battery) is
    /// the workout its records span, of its sport message's sport, with every record's heart
    /// rate and position; nothing of it is dropped.
    @Test func recordsWithoutASessionBecomeTheWorkoutTheySpan() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/cut.fit"
        let start: Int64 = 1_717_228_800
        try Data(SyntheticFIT.activity(start: start, seconds: 600, utcOffset: 7_200, sport: 2, seed: 9, summary: false))
            .write(to: URL(fileURLWithPath: path))
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([path])
        let events = try t.vault.allEvents().map(\.event)
        let workouts = events.compactMap { event -> Workout? in
            if case .workout(let w) = event { return w }
            return nil
        }
        #expect(workouts.count == 1)
        #expect(workouts.first?.activityType == "HKWorkoutActivityTypeCycling")
        #expect(workouts.first?.start.seconds == start && workouts.first?.end.seconds == start + 599)
        #expect(workouts.first?.start.utcOffset == Int32(TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: Double(start)))))
        let heartRates = events.filter { if case .sample(let s) = $0 { s.type == "HKQuantityTypeIdentifierHeartRate" } else { false } }
        let speeds = events.filter { if case .sample(let s) = $0 { s.type == "HKQuantityTypeIdentifierCyclingSpeed" } else { false } }
        #expect(heartRates.count == 600 && speeds.count == 600)
        let routes = events.compactMap { event -> WorkoutRoute? in
            if case .route(let r) = event { return r }
            return nil
        }
        #expect(routes.map(\.points.count) == [600])
        #expect(report.files[0].warnings == ["cut.fit: no session summary; its 600 record(s) became a workout from the first to the last"])
        #expect(try t.vault.importFiles([path]).added == 0)
    }

    /// Records whose timestamp field is missing (a Wahoo file of developer data: three heart
    /// rates, no session, and Garmin's SDK reads them with no time): nothing places them in
    /// time, so nothing is kept, and the file says why rather than calling itself a settings file.
    @Test func recordsWithoutATimeAreNamedAndNotKept() throws {
        let figures = try #require(Self.oracle["DeveloperData.fit"])
        #expect(figures["recordsWithHeartRate"] as? Int == 3 && figures["firstRecord"] is NSNull)
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.path("DeveloperData.fit")])
        #expect(report.added == 0 && report.rejected == 0)
        #expect(report.files[0].warnings == ["DeveloperData.fit: 3 record(s) without a time (no timestamp field): not kept"])
    }

    static let monitoringWithHeartRate = oracle.filter { ($0.value["monitoringHeartRates"] as? Int ?? 0) > 0 }.keys.sorted()

    /// A recent watch's monitoring files (a vívosmart 4): every heart rate, the intensity minutes
    /// as exercise minutes and the day's resting heart rate, as Garmin's SDK reads them.
    @Test(arguments: monitoringWithHeartRate) func aWatchsDayHasItsHeartRateIntensityMinutesAndRestingRate(file: String) throws {
        let expected = Self.oracle[file]!
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.path(file)])
        let samples = try t.vault.allEvents().compactMap { event -> (type: String, value: Double)? in
            if case .sample(let s) = event.event, case .quantity(let v, _) = s.value { return (s.type, v.double) }
            return nil
        }
        func values(_ type: String) -> [Double] { samples.filter { $0.type == "HKQuantityTypeIdentifier" + type }.map(\.value) }
        #expect(values("HeartRate").count == expected["monitoringHeartRates"] as? Int, "\(file) heart rates")
        #expect(Int(values("HeartRate").reduce(0, +)) == expected["monitoringHeartRateSum"] as? Int, "\(file) heart rates' sum")
        #expect(Int(values("AppleExerciseTime").reduce(0, +)) == expected["monitoringIntensityMinutes"] as? Int, "\(file) intensity minutes")
        #expect(values("RestingHeartRate").map { Int($0) } == expected["monitoringRestingHeartRates"] as? [Int], "\(file) resting heart rates")
        let exercise = try t.vault.summary(metric: "exercise-time", by: .day)
        #expect(Int(exercise.reduce(0) { $0 + $1.value }) == expected["monitoringIntensityMinutes"] as? Int, "\(file) exercise minutes by day")
        #expect(try t.vault.importFiles([Self.path(file)]).added == 0 && report.added > 0)
    }

    /// A night's levels: each holds until the next, the last until the stop event; light sleep
    /// is core sleep; the night's minutes per stage are what the file says.
    @Test func aSleepFilesLevelsAreTheNightsStages() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/sleep.fit"
        // 22:30 UTC: awake 10 min, light 90, deep 45, light 60, REM 30, awake 5, light 50 until the stop.
        let levels: [(minutes: Int, level: UInt8)] = [(0, 1), (10, 2), (100, 3), (145, 2), (205, 4), (235, 1), (240, 2), (250, 2)]
        try Data(SyntheticFIT.sleep(start: 1_717_281_000, levels: levels, stopMinutes: 290)).write(to: URL(fileURLWithPath: path))
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([path])
        let minutes = try t.vault.allEvents().reduce(into: [String: Int64]()) { sums, event in
            if case .sample(let s) = event.event, case .category(let value) = s.value {
                sums[value, default: 0] += (s.end.seconds - s.start.seconds) / 60
            }
        }
        #expect(minutes == ["HKCategoryValueSleepAnalysisAwake": 15, "HKCategoryValueSleepAnalysisAsleepCore": 200,
                            "HKCategoryValueSleepAnalysisAsleepDeep": 45, "HKCategoryValueSleepAnalysisAsleepREM": 30])
        let nights = try t.vault.sleep()
        #expect(nights.map(\.asleep) == [275] && nights.map(\.deep) == [45] && nights.map(\.awake) == [15])
    }

    /// A vívosmart 4's sleep file whose levels are all awake (its stages are in undocumented
    /// messages) adds no sleep, and says so.
    @Test func aSleepFileOfOnlyWakingLevelsAddsNoSleep() throws {
        let file = "vivosmart4-sleep-68520562673.fit"
        let expected = try #require(Self.oracle[file]?["sleepMinutes"] as? [String: Double])
        #expect(expected == ["1": 119])
        let t = try ImportTestVault()
        let report = try? t.vault.importFiles([Self.path(file)])
        #expect(try t.vault.sleep().isEmpty)
        #expect(report?.files.first?.warnings.contains("48 sleep level(s) read, all awake or unmeasurable: no sleep in them, none kept") == true)
    }

    /// The benchmark's generated day of monitoring reads back as written: the day's steps are the
    /// last cumulative count, a heart rate every other minute, the resting rate once.
    @Test func aGeneratedMonitoringDayReadsBackAsWritten() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/day.fit"
        let bytes = SyntheticFIT.monitoring(start: 1_704_067_200 - 3_600, utcOffset: 3_600, seed: 4)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var last: Int64 = 0
        _ = try FITDecoder.decode(bytes) { messages in last = messages.filter { $0.global == 55 }.compactMap { $0.integer(3) }.last ?? 0 }
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([path])
        #expect(try t.vault.summary(metric: "steps", by: .day).map { Int64($0.value.rounded()) } == [last])
        #expect(try t.vault.summary(metric: "steps", by: .day).map(\.period) == ["2024-01-01"])
        let types = try t.vault.allEvents().compactMap { event -> String? in
            if case .sample(let s) = event.event { return s.type }
            return nil
        }
        #expect(types.filter { $0 == "HKQuantityTypeIdentifierHeartRate" }.count == 720)
        #expect(types.filter { $0 == "HKQuantityTypeIdentifierRestingHeartRate" }.count == 1)
    }

    @Test func aMonitoringFilesStepsPerDayAreTheDevicesOwnDailyTotals() throws {
        let expected = try #require(Self.oracle["MonitoringFile.fit"]?["monitoringDailySteps"] as? [String: Int])
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([Self.path("MonitoringFile.fit")])
        let days = try t.vault.summary(metric: "steps", by: .day)
        #expect(Dictionary(uniqueKeysWithValues: days.map { ($0.period, Int($0.value.rounded())) }) == expected, "\(days)")
        // The day's active calories, as the device's summaries give them, over the local day.
        let calories = try #require(Self.oracle["MonitoringFile.fit"]?["monitoringDailyActiveCalories"] as? [String: Int])
        let energy = try t.vault.summary(metric: "active-energy", by: .day)
        #expect(Dictionary(uniqueKeysWithValues: energy.map { ($0.period, Int($0.value.rounded())) }) == calories, "\(energy)")
    }

    @Test func aScalesWeighingsComeInAndASharedScalesAreRefused() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([Self.path("WeightScaleSingleUser.fit")])
        let masses = try t.vault.allEvents().compactMap { event -> Double? in
            guard case .sample(let s) = event.event, s.type == "HKQuantityTypeIdentifierBodyMass", case .quantity(let v, unit: "kg") = s.value else { return nil }
            return v.double
        }
        #expect(masses.map { ($0 * 100).rounded() / 100 } == (Self.oracle["WeightScaleSingleUser.fit"]?["weights"] as? [Double]))
        let error = #expect(throws: ImportError.self) { try t.vault.importFiles([Self.path("WeightScaleMultiUser.fit")]) }
        guard case .nothingImportable(_, let rejected, let reasons)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(rejected == 2 && reasons.contains { $0.contains("weighings of 2 people") }, "\(String(describing: error))")
    }

    /// A device's folder as it shows when plugged in: its Activity, Monitor and Weight files, as one import.
    @Test func aDeviceFolderIsImportedAsOne() throws {
        let t = try ImportTestVault()
        let device = t.dir.path + "/GARMIN"
        for (folder, file) in [("Activity", "garmin-fenix-5-run.fit"), ("Monitor", "MonitoringFile.fit"), ("Weight", "WeightScaleSingleUser.fit")] {
            try FileManager.default.createDirectory(atPath: device + "/" + folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Self.path(file), toPath: device + "/" + folder + "/" + file)
        }
        #expect(FileManager.default.createFile(atPath: device + "/Activity/readme.txt", contents: Data("not a FIT file".utf8)))
        let report = try t.vault.importFiles([device])
        #expect(report.files.map { ($0.path as NSString).lastPathComponent } == ["garmin-fenix-5-run.fit", "MonitoringFile.fit", "WeightScaleSingleUser.fit"])
        #expect(try t.vault.workouts(by: .day).map(\.count) == [1])
        #expect(try t.vault.summary(metric: "steps", by: .day).map { Int($0.value) } == [3173])
        let empty = t.dir.path + "/EMPTY"
        try FileManager.default.createDirectory(atPath: empty + "/Activity", withIntermediateDirectories: true)
        #expect(throws: ImportError.unreadable(path: empty, reason: "a device folder without a .fit file in Activity")) { try t.vault.importFiles([empty]) }
    }

    @Test func aCutFileIsRefusedByItsByteAndAChainKeepsItsWholeFiles() throws {
        let t = try ImportTestVault()
        let error = #expect(throws: ImportError.self) { try t.vault.importFiles([Self.path("activity-unexpected-eof.fit")]) }
        #expect(error.map { "\($0)" }?.contains("activity-unexpected-eof.fit: byte 768: the file ends before") == true, "\(String(describing: error))")
        #expect(try t.vault.allEvents().allSatisfy { $0.event.isAudit })
        let report = try t.vault.importFiles([Self.path("activity-settings-corruptheader.fit")])
        #expect(report.added > 0)
        #expect(report.files.first?.warnings.contains { $0.contains("byte 771: not a FIT file header") } == true, "\(report)")
    }
}

/// A run a Garmin recorded, imported from its FIT file and again from Apple Health where Garmin
/// Connect synced it, is one run in `workouts`, `stats` and the daily bundle lines; the source that
/// ranks first (`sources order`) is the one counted; a ride at the same time stays a ride, and two
/// workouts of one source are two.
@Suite struct WorkoutDeduplicationTests {
    /// The fenix 5 run (2017-06-11 14:34:09 to 14:35:24 UTC) as Garmin Connect writes it into
    /// Apple Health, two seconds off, with Connect's own rounding of its length.
    static let synced = """
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="1.25" durationUnit="min" sourceName="Connect" \
        startDate="2017-06-11 07:34:11 -0700" endDate="2017-06-11 07:35:26 -0700"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeCycling" duration="1" durationUnit="min" sourceName="Connect" \
        startDate="2017-06-11 07:34:30 -0700" endDate="2017-06-11 07:35:30 -0700"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" sourceName="Connect" \
        startDate="2017-06-11 18:00:00 -0700" endDate="2017-06-11 18:20:00 -0700"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" sourceName="Connect" \
        startDate="2017-06-11 18:05:00 -0700" endDate="2017-06-11 18:25:00 -0700"/>

        """

    @Test func theSameRunFromAWatchAndFromAppleHealthCountsOnce() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([FITImportTests.path("garmin-fenix-5-run.fit"), t.write("export.xml", export(Self.synced))])
        let rows = try t.vault.workouts(by: .day)
        #expect(rows.map { "\($0.period) \($0.type) \($0.count)" } == ["2017-06-11 HKWorkoutActivityTypeRunning 3", "2017-06-11 HKWorkoutActivityTypeCycling 1"],
                "\(rows)")
        #expect(try t.vault.trainingStats(by: .week).map(\.workouts) == [4])
        // Connect first: its 1.25 minutes count; the watch first: the FIT file's 56.887 s (timer).
        _ = try t.vault.setSourceOrder(names: ["Connect"])
        let connect = try #require(try t.vault.workouts(by: .day).first { $0.type == "HKWorkoutActivityTypeRunning" })
        #expect(abs(connect.minutes - (1.25 + 20 + 20)) < 1e-9, "\(connect.minutes)")
        _ = try t.vault.setSourceOrder(names: ["Garmin"])
        let garmin = try #require(try t.vault.workouts(by: .day).first { $0.type == "HKWorkoutActivityTypeRunning" })
        #expect(abs(garmin.minutes - (56.887 / 60 + 20 + 20)) < 1e-9, "\(garmin.minutes)")
        // The read models after all this equal a rebuild's.
        #expect(try Vault.verify(at: t.path, passphrase: passphrase("p")).isOK)
    }
}
