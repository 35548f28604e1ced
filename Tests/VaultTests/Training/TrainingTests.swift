import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
@testable import Importers
import Testing
@testable import Vault
import VaultTestSupport

/// SoFit's stats (issue 41): exercises with body parts and motion, sets logged by hand, and the
/// workouts the importers bring, per week, two weeks and month, with shares per body part and
/// motion worked out here by hand from what was logged.
@Suite struct TrainingTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let losAngeles = TimeZone(identifier: "America/Los_Angeles")!

    func at(_ text: String, _ zone: TimeZone = berlin) -> HealthTimestamp { LocalTime.parse(Substring(text), timeZone: zone)! }

    /// A week of sets and two runs, shares by count and by minutes against sums done by hand.
    @Test func sharesOfAWeekAreTheSetsAndWorkoutsWeighedByCountAndByMinutes() throws {
        let t = try ImportTestVault()
        // Two runs (legs, endurance) of 30 and 45 min in ISO week 2024-W10 (4 to 10 March).
        _ = try t.vault.importFiles([t.write("export.xml", export(
            Self.workout("Running", "2024-03-05 07:00:00 +0100", minutes: 30) + Self.workout("Running", "2024-03-07 07:00:00 +0100", minutes: 45)))])
        #expect(try t.vault.workouts(by: .week).map(\.count) == [2], "the CSV's workouts were not imported")
        try t.vault.practice(name: "push-ups", repetitions: 20, seconds: 120, at: at("2024-03-05 18:00"))
        try t.vault.practice(name: "Push-Ups", repetitions: 15, seconds: 60, at: at("2024-03-06 18:00"))
        try t.vault.practice(name: "plank", repetitions: 1, seconds: 90, at: at("2024-03-06 18:05"))
        try t.vault.practice(name: "stretching", repetitions: 5, seconds: nil, at: at("2024-03-08 18:00"))
        let byCount = try #require(try t.vault.trainingStats(by: .week).first)
        #expect(byCount.period == "2024-W10")
        #expect(byCount.sets == 4 && byCount.repetitions == 41 && byCount.workouts == 2)
        #expect(abs(byCount.minutes - (30 + 45 + 2 + 1 + 1.5)) < 1e-9)
        // Six items: push-ups twice (chest and arms, half each), plank (core), stretching (full
        // body), two runs (legs).
        let expectedParts: [String: Double] = ["chest": 1.0 / 6, "arms": 1.0 / 6, "core": 1.0 / 6, "full-body": 1.0 / 6, "legs": 2.0 / 6]
        #expect(Self.close(byCount.bodyParts, expectedParts), "\(byCount.bodyParts)")
        #expect(Self.close(byCount.motion, ["strength": 3.0 / 6, "mobility": 1.0 / 6, "endurance": 2.0 / 6]), "\(byCount.motion)")
        // By minutes: 2 + 1 min of push-ups, 1.5 of plank, none of stretching, 75 of running.
        let byMinutes = try #require(try t.vault.trainingStats(by: .week, weight: .minutes).first)
        let total = 2 + 1 + 1.5 + 75.0
        #expect(Self.close(byMinutes.bodyParts, ["chest": 1.5 / total, "arms": 1.5 / total, "core": 1.5 / total, "legs": 75 / total]),
                "\(byMinutes.bodyParts)")
        #expect(Self.close(byMinutes.motion, ["strength": 4.5 / total, "endurance": 75 / total]), "\(byMinutes.motion)")
    }

    /// Random sets and workouts over three months: every period's shares sum to 1, by count and
    /// by minutes, in every grouping, and the periods' sets and workouts add up to what was logged.
    @Test func sharesSumToOneInEveryPeriod() throws {
        let seed = TestSeed()
        var random = seed.generator
        let t = try ImportTestVault()
        let exercises = try t.vault.exercises()
        var body = ""
        let types = ["Running", "Yoga", "TraditionalStrengthTraining", "Cycling", "Other", "Swimming", "CoreTraining"]
        var workouts = 0, sets = 0
        for day in 0..<90 {
            let date = LocalDay(dayNumber: LocalDay(year: 2024, month: 2, day: 20).dayNumber + Int64(day)).description
            for n in 0..<random.next(3) {
                let type = types[random.next(types.count)]
                body += Self.workout(type, "\(date) 1\(n):00:00 +0100", minutes: 10 + random.next(40))
                workouts += 1
            }
            for n in 0..<random.next(4) {
                let exercise = exercises[random.next(exercises.count)]
                let seconds = random.next(3) == 0 ? nil : 30 + random.next(300)
                try t.vault.practice(name: exercise.name, repetitions: 1 + random.next(30), seconds: seconds, at: at("\(date) 0\(n):30"))
                sets += 1
            }
        }
        _ = try t.vault.importFiles([t.write("export.xml", export(body))])
        for period in [SummaryPeriod.week, .twoWeeks, .month] {
            for weight in [TrainingShareWeight.count, .minutes] {
                let periods = try t.vault.trainingStats(by: period, weight: weight)
                #expect(periods.reduce(0) { $0 + $1.sets } == sets, "\(seed)")
                #expect(periods.reduce(0) { $0 + $1.workouts } == workouts, "\(seed)")
                for p in periods where !p.bodyParts.isEmpty || weight == .count {
                    #expect(abs(p.bodyParts.values.reduce(0, +) - 1) < 1e-9, "\(p.period) \(period) \(weight) \(seed)")
                    #expect(abs(p.motion.values.reduce(0, +) - 1) < 1e-9, "\(p.period) \(period) \(weight) \(seed)")
                }
            }
        }
        // `Other` is no kind the table knows: its workouts count as unknown.
        let months = try t.vault.trainingStats(by: .month)
        #expect(body.contains("TypeOther") == months.contains { $0.motion["unknown"] != nil }, "\(seed)")
    }

    /// A set belongs to the local day it was done on, in the offset of that moment: 23:55 on a
    /// Sunday in Los Angeles (07:55 on Monday in UTC) is in that Sunday's ISO week and, on the
    /// last day of a month, in that month; five minutes after midnight is in the next.
    @Test func aSetBeforeMidnightStaysInItsWeekAndMonthAcrossDST() throws {
        let t = try ImportTestVault()
        // Sunday 2024-03-10 is also the day Los Angeles springs forward (02:00 → 03:00).
        try t.vault.practice(name: "squats", repetitions: 10, seconds: nil, at: at("2024-03-10 23:55", Self.losAngeles))
        try t.vault.practice(name: "squats", repetitions: 12, seconds: nil, at: at("2024-03-11 00:05", Self.losAngeles))
        try t.vault.practice(name: "squats", repetitions: 14, seconds: nil, at: at("2024-03-10 01:30", Self.losAngeles))
        try t.vault.practice(name: "squats", repetitions: 16, seconds: nil, at: at("2024-03-10 03:30", Self.losAngeles))
        // Sunday 2024-03-31, the last day of March, and the first minutes of April.
        try t.vault.practice(name: "lunges", repetitions: 20, seconds: nil, at: at("2024-03-31 23:59", Self.losAngeles))
        try t.vault.practice(name: "lunges", repetitions: 22, seconds: nil, at: at("2024-04-01 00:01", Self.losAngeles))
        // Autumn: 2024-11-03 01:30 happens twice in Los Angeles; the set stays on the 3rd.
        try t.vault.practice(name: "lunges", repetitions: 24, seconds: nil, at: at("2024-11-03 01:30", Self.losAngeles))
        let weeks = try t.vault.trainingStats(by: .week).map { "\($0.period) \($0.repetitions)" }
        #expect(weeks == ["2024-W10 40", "2024-W11 12", "2024-W13 20", "2024-W14 22", "2024-W44 24"])
        let months = try t.vault.trainingStats(by: .month).map { "\($0.period) \($0.repetitions)" }
        #expect(months == ["2024-03 72", "2024-04 22", "2024-11 24"])
        // Two weeks end on the range's last day: with 2024-04-14 the last, 2024-03-31 ends one, so
        // 23:59 on the 31st is in it and 00:01 on April 1st opens the next.
        let fortnights = try t.vault.trainingStats(by: .twoWeeks, to: LocalDay(year: 2024, month: 4, day: 14)).map { "\($0.period) \($0.repetitions)" }
        #expect(fortnights == ["2024-03-04..2024-03-17 52", "2024-03-18..2024-03-31 20", "2024-04-01..2024-04-14 22"])
    }

    @Test func exercisesAreTheCatalogueAndThePersonsOwnAndBadInputIsRefused() throws {
        let t = try ImportTestVault()
        #expect(try t.vault.exercises().count == ExerciseCatalog.seeded.count)
        try t.vault.addExercise(name: "Wall sit", bodyParts: [.legs, .core], motion: .strength)
        // Defined again from now on: a set before keeps what it was logged with.
        try t.vault.practice(name: "wall sit", repetitions: 1, seconds: 60, at: at("2024-05-01 08:00"))
        try t.vault.addExercise(name: "WALL SIT", bodyParts: [.legs], motion: .endurance)
        try t.vault.practice(name: "Wall sit", repetitions: 1, seconds: 60, at: at("2024-05-02 08:00"))
        let mine = try #require(try t.vault.exercises().first { $0.name == "Wall sit" })
        #expect(mine == Exercise(name: "Wall sit", bodyParts: [.legs], motion: .endurance))
        #expect(try t.vault.exercises().count == ExerciseCatalog.seeded.count + 1)
        let days = try t.vault.trainingStats(by: .day)
        #expect(days.map(\.motion) == [["strength": 1], ["endurance": 1]])
        #expect(days.map(\.bodyParts) == [["legs": 0.5, "core": 0.5], ["legs": 1]])
        #expect(throws: VaultError.unknownExercise(name: "handstand")) {
            try t.vault.practice(name: "handstand", repetitions: 1, seconds: nil, at: at("2024-05-02 08:00"))
        }
        #expect(throws: VaultError.invalidExercise(reason: "a set needs repetitions or a duration")) {
            try t.vault.practice(name: "plank", repetitions: 0, seconds: nil, at: at("2024-05-02 08:00"))
        }
        #expect(throws: VaultError.invalidExercise(reason: "give at least one body part (--body-part P[,P...])")) {
            try t.vault.addExercise(name: "Nothing", bodyParts: [], motion: .mobility)
        }
        #expect(throws: VaultError.invalidExercise(reason: "an exercise's name: no leading or trailing spaces")) {
            try t.vault.addExercise(name: "Nothing ", bodyParts: [.core], motion: .mobility)
        }
    }

    /// Sets are `workouts` data: a raw bundle holds each, a daily one each day's repetitions per
    /// exercise; erasing the month takes them from `stats`, from the bundles and from the log.
    @Test func setsAreExportedUnderWorkoutsAndErasedWithTheirMonth() throws {
        let t = try ImportTestVault()
        try t.vault.practice(name: "push-ups", repetitions: 20, seconds: 90, at: at("2024-03-05 18:00"))
        try t.vault.practice(name: "push-ups", repetitions: 10, seconds: nil, at: at("2024-03-05 18:10"))
        try t.vault.practice(name: "squats", repetitions: 30, seconds: nil, at: at("2024-04-02 18:00"))
        let shared = try SharedLines(t)
        let raw = try shared.export([.workouts], from: nil, to: nil).lines(.workouts)
        #expect(raw.map { $0["type"] as? String } == ["practice", "practice", "practice"])
        #expect(raw.map { $0["value"] as? Double } == [20, 10, 30])
        #expect(raw.map { $0["exercise"] as? String } == ["push-ups", "push-ups", "squats"])
        #expect(raw.first?["bodyParts"] as? String == "chest,arms" && raw.first?["motion"] as? String == "strength")
        #expect(raw.first?["start"] as? String == "2024-03-05T18:00:00+01:00" && raw.first?["end"] as? String == "2024-03-05T18:01:30+01:00")
        #expect(raw.first?["minutes"] as? Double == 1.5)
        let daily = try shared.export([.workouts], from: nil, to: nil, granularity: .daily).lines(.workouts)
        #expect(daily.map { "\($0["period"]!) \($0["metric"]!) \($0["value"]!) \($0["samples"]!)" }
                == ["2024-03-05 exercise:push-ups 30 2", "2024-04-02 exercise:squats 30 1"])
        _ = try t.vault.erase(categories: [.workouts], from: LocalMonth(year: 2024, month: 3), to: LocalMonth(year: 2024, month: 3))
        #expect(try t.vault.trainingStats(by: .month).map(\.period) == ["2024-04"])
        #expect(try shared.export([.workouts], from: nil, to: nil).lines(.workouts).map { $0["exercise"] as? String } == ["squats"])
        #expect { try t.vault.practice(name: "squats", repetitions: 1, seconds: nil, at: at("2024-03-20 08:00")) } throws: {
            ($0 as? VaultError) == .invalidExercise(reason: "workouts data of 2024-03 was erased; nothing is logged there")
        }
        let events = try t.vault.allEvents().map(\.event)
        #expect(events.filter { if case .practiceLogged = $0 { true } else { false } }.count == 1)
        // The read models equal a rebuild from the log (verify compares them table by table).
        let report = try Vault.verify(at: t.path, passphrase: passphrase("p"))
        #expect(report.isOK, "\(report.problems)")
    }

    /// Nothing outside the consented period leaves: a ten-minute set begun at 23:55 on the
    /// period's last day is cut at midnight, marked clipped, and not sent again by since-last.
    @Test func aSetRunningPastThePeriodIsCutAtItsEdge() throws {
        let t = try ImportTestVault()
        try t.vault.practice(name: "plank", repetitions: 1, seconds: 600, at: at("2024-03-31 23:55"))
        let shared = try SharedLines(t)
        let line = try #require(try shared.export([.workouts], from: LocalDay(year: 2024, month: 3, day: 1),
                                                  to: LocalDay(year: 2024, month: 3, day: 31)).lines(.workouts).first)
        #expect(line["start"] as? String == "2024-03-31T23:55:00+02:00" && line["end"] as? String == "2024-04-01T00:00:00+02:00")
        #expect(line["clipped"] as? Bool == true)
    }

    /// A workout element of an Apple export starting at `start` (its own clock), `minutes` long.
    static func workout(_ type: String, _ start: String, minutes: Int) -> String {
        """
        <Workout workoutActivityType="HKWorkoutActivityType\(type)" duration="\(minutes)" durationUnit="min" sourceName="Watch" \
        startDate="\(start)" endDate="\(start)"/>

        """
    }

    static func close(_ a: [String: Double], _ b: [String: Double]) -> Bool {
        Set(a.keys) == Set(b.keys) && a.allSatisfy { abs($0.value - b[$0.key]!) < 1e-9 }
    }
}

/// Health Auto Export's workouts come in by their display names: each name it is known to write
/// lands on a classified type (only what it calls something else is `Other`, shown as unknown).
@Suite struct AutoExportWorkoutClassificationTests {
    @Test func everyNameTheTableKnowsIsClassified() {
        let names = ["Outdoor Run", "Indoor Walk", "Hiking", "Outdoor Cycle", "Indoor Bike", "Pool Swim", "Yoga", "HIIT",
                     "Indoor Rower", "Traditional Strength Training", "Elliptical", "Dance"]
        for name in names {
            let type = AutoExport.activityType(name)
            #expect(type != "HKWorkoutActivityTypeOther" && WorkoutActivityTypes.profile(of: type) != nil, "\(name) → \(type)")
        }
        #expect(WorkoutActivityTypes.profile(of: AutoExport.activityType("Zorbing")) == nil)
    }
}

/// A set's lines in the standard formats: repetitions in UCUM as an annotated count, and a day's
/// repetitions (or workout minutes) an Open mHealth sum, not an average.
@Suite struct TrainingStandardFormatTests {
    func convert(_ line: String, _ format: StandardFormat, granularity: String) throws -> [String: Any] {
        var encoder = StandardLineEncoder(format: format, granularity: granularity, createdAt: Date(timeIntervalSince1970: 0), salt: [1])
        try encoder.append(try Array(line.utf8).withUnsafeBufferPointer { try BundleLineReader().read($0) })
        return try #require(try JSONSerialization.jsonObject(with: Data(encoder.bytes.split(separator: 0x0A)[0])) as? [String: Any])
    }

    @Test func repetitionsAreAnAnnotatedCountAndADaysAreASum() throws {
        let raw = #"{"category":"workouts","type":"practice","start":"2024-03-10T10:00:00+01:00","end":"2024-03-10T10:02:00+01:00","value":20,"unit":"reps","exercise":"push-ups","bodyParts":"chest,arms","motion":"strength","minutes":2}"#
        let fhir = try convert(raw, .fhir, granularity: "raw")
        let quantity = try #require(fhir["valueQuantity"] as? [String: Any])
        #expect(quantity["value"] as? Double == 20 && quantity["code"] as? String == "{repetitions}" && quantity["unit"] as? String == "reps")
        let extensions = try #require(fhir["extension"] as? [[String: Any]])
        #expect(extensions.contains { $0["url"] as? String == "urn:healthvault:field:exercise" && $0["valueString"] as? String == "push-ups" })
        for metric in ["exercise:push-ups", "workout:HKWorkoutActivityTypeRunning"] {
            let daily = #"{"category":"workouts","metric":"\#(metric)","period":"2024-03-10","value":30,"unit":"reps","samples":2}"#
            let omh = try convert(daily, .omh, granularity: "daily")
            #expect((omh["body"] as? [String: Any])?["descriptive_statistic"] as? String == "sum", "\(metric)")
        }
        let heart = #"{"category":"heart","metric":"HKQuantityTypeIdentifierHeartRate","period":"2024-03-10","value":61,"unit":"count/min","samples":40}"#
        #expect((try convert(heart, .omh, granularity: "daily")["body"] as? [String: Any])?["descriptive_statistic"] as? String == "average")
    }
}
