import Foundation
@testable import HealthModel
import Importers
import Testing
@testable import Vault
import VaultEvents
import VaultTestSupport

/// Health Auto Export's shapes that did not get in (issue 36): sleep as stages and as a night's
/// totals, blood pressure, heart rate's minimum and maximum, a v2 workout's route; and a file of
/// which nothing could be read fails the import.
@Suite struct AutoExportShapesTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func samples(_ t: ImportTestVault) throws -> [HealthSample] {
        try t.dataEvents().compactMap { if case .sample(let s) = $0 { s } else { nil } }
    }

    @Test func sleepStagesAndANightsTotalsGiveTheNightTheAppShows() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("sleep.json", """
            {"data":{"metrics":[
              {"name":"sleep_analysis","units":"hr","data":[
                {"startDate":"2024-03-04 23:10:00 +0100","endDate":"2024-03-05 01:10:00 +0100","value":"Core","qty":2,"source":"Anna's Apple Watch"},
                {"startDate":"2024-03-05 01:10:00 +0100","endDate":"2024-03-05 02:40:00 +0100","value":"Deep","qty":1.5,"source":"Anna's Apple Watch"},
                {"startDate":"2024-03-05 02:40:00 +0100","endDate":"2024-03-05 03:40:00 +0100","value":"REM","qty":1,"source":"Anna's Apple Watch"},
                {"startDate":"2024-03-05 03:40:00 +0100","endDate":"2024-03-05 03:55:00 +0100","value":"Awake","qty":0.25,"source":"Anna's Apple Watch"}
              ]},
              {"name":"sleep_analysis","units":"hr","data":[
                {"date":"2024-03-07 00:00:00 +0100","sleepStart":"2024-03-06 23:00:00 +0100","sleepEnd":"2024-03-07 06:30:00 +0100",
                 "inBedStart":"2024-03-06 22:45:00 +0100","inBedEnd":"2024-03-07 06:45:00 +0100",
                 "asleep":7,"core":4,"deep":1.5,"rem":1.25,"awake":0.5,"inBed":8,"source":"Anna's Apple Watch"}
              ]}
            ]}}
            """)], timeZone: Self.utc)
        // Four stages; a night's totals: in bed, deep, core, REM, the quarter hour of asleep
        // without a stage, awake.
        #expect(report.added == 10 && report.rejected == 0, "\(report.files[0].warnings)")
        let nights = try t.vault.sleep()
        #expect(nights.map(\.night.description) == ["2024-03-05", "2024-03-07"])
        #expect(nights.map(\.core) == [120, 240] && nights.map(\.deep) == [90, 90] && nights.map(\.rem) == [60, 75])
        #expect(nights.map(\.awake) == [15, 30] && nights[1].inBed == 480 && nights[1].asleep == 420)
        let placed = try Self.samples(t).filter { $0.metadata.contains { $0.key == "HealthAutoExportPlacement" } }
        #expect(placed.count == 5)
    }

    @Test func bloodPressureAndHeartRatesRangeAreKept() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("vitals.json", """
            {"data":{"metrics":[
              {"name":"blood_pressure","units":"mmHg","data":[{"date":"2024-03-05 08:00:00 +0100","systolic":121,"diastolic":79}]},
              {"name":"heart_rate","units":"count/min","data":[{"date":"2024-03-05 08:00:00 +0100","Min":52,"Avg":63.5,"Max":88}]}
            ]}}
            """)], timeZone: Self.utc)
        #expect(report.added == 3 && report.rejected == 0, "\(report.files[0].warnings)")
        let byType = Dictionary(try Self.samples(t).map { ($0.type, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byType["HKQuantityTypeIdentifierBloodPressureSystolic"]?.value == .quantity(DecimalValue(mantissa: 121, scale: 0), unit: "mmHg"))
        #expect(byType["HKQuantityTypeIdentifierBloodPressureDiastolic"]?.value == .quantity(DecimalValue(mantissa: 79, scale: 0), unit: "mmHg"))
        let heart = try #require(byType["HKQuantityTypeIdentifierHeartRate"])
        #expect(heart.value == .quantity(DecimalValue(double: 63.5), unit: "count/min"))
        #expect(heart.metadata.sorted { $0.key < $1.key } == [MetadataEntry(key: "Max", value: "88"), MetadataEntry(key: "Min", value: "52")])
    }

    @Test func aWorkoutsRouteIsKept() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("workout.json", """
            {"data":{"workouts":[{"name":"Outdoor Run","start":"2024-03-05 07:00:00 +0100","end":"2024-03-05 07:30:00 +0100","duration":1800,
              "route":[{"lat":52.52,"lon":13.405,"altitude":34,"timestamp":"2024-03-05 07:00:05 +0100"},
                       {"latitude":52.521,"longitude":13.406,"altitude":35,"timestamp":"2024-03-05 07:00:10 +0100"},
                       {"lat":95,"lon":13.4,"timestamp":"2024-03-05 07:00:15 +0100"}]}]}}
            """)], timeZone: Self.utc)
        #expect(report.added == 2)
        #expect(report.files[0].warnings == ["1 route point(s) without a readable position or time skipped in data.workouts[0].route"])
        let routes = try t.dataEvents().compactMap { if case .route(let r) = $0 { r } else { nil } }
        #expect(routes.count == 1 && routes[0].points.map(\.latitude) == [52.52, 52.521] && routes[0].points.map(\.altitude) == [34, 35])
    }

    @Test func aFileOfWhichNothingCouldBeReadFailsTheImport() throws {
        let t = try ImportTestVault()
        let good = t.write("good.csv", "type,start,end,value,unit,source\nsteps,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,10,count,Band\n")
        let bad = t.write("bad.json", """
            {"data":{"metrics":[{"name":"sleep_analysis","data":[{"startDate":"2024-03-05 01:00:00 +0100","endDate":"2024-03-05 02:00:00 +0100","value":"Dreaming"}]}]}}
            """)
        #expect(throws: ImportError.nothingImportable(path: bad, rejected: 1, reasons: ["1 entry rejected: unknown sleep stage (first at data.metrics[0].data[0])"])) {
            try t.vault.importFiles([good, bad], timeZone: Self.utc)
        }
        #expect(try Self.samples(t).isEmpty)
    }
}

/// The real payloads of `Tests/Fixtures/health-auto-export/` (README there: where from, licence,
/// and the figures counted from them with python3's json module), against what the vault shows.
@Suite struct AutoExportFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/health-auto-export").path

    @Test func aNightsTotalsOfTheFirstShape() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.folder + "/sleep-aggregated-v1.json"])
        #expect(report.added == 2 && report.rejected == 0, "\(report.files[0].warnings)")
        let nights = try t.vault.sleep()
        #expect(nights.map(\.night.description) == ["2021-12-18"])
        #expect(abs(nights[0].asleep - 366.5) < 0.02 && abs(nights[0].inBed - 411.9167) < 0.02, "\(nights)")
    }

    @Test func aNightsTotalsWithStages() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.folder + "/sleep-aggregated-v662.json"])
        // In bed (placed), deep, core, REM, awake; `asleep` 0 adds nothing.
        #expect(report.added == 5 && report.rejected == 0, "\(report.files[0].warnings)")
        let night = try #require(try t.vault.sleep().first)
        #expect(night.night.description == "2023-01-31")
        #expect(night.deep == 51.5 && night.rem == 75.5 && night.core == 198 && night.awake == 7, "\(night)")
        #expect(abs(night.inBed - 488.7) < 0.02 && night.asleep == 325, "\(night)")
    }

    @Test func aWalkOfTheFirstWorkoutShapeWithItsRouteAndHeartRate() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.folder + "/workout-v1-route.json"])
        #expect(report.added == 3 && report.rejected == 0, "\(report.files[0].warnings)")
        let events = try t.dataEvents()
        let workout = try #require(events.compactMap { if case .workout(let w) = $0 { w } else { nil } }.first)
        #expect(workout.activityType == "HKWorkoutActivityTypeWalking")
        #expect(abs((workout.duration?.double ?? 0) - 19.1667) < 0.001 && abs((workout.totalEnergy?.double ?? 0) - 54.0658) < 0.001)
        let route = try #require(events.compactMap { if case .route(let r) = $0 { r } else { nil } }.first)
        #expect(route.points.map(\.latitude) == [38.8951] && route.points.map(\.longitude) == [-77.0364])
        let heart = events.compactMap { if case .sample(let s) = $0, s.type == "HKQuantityTypeIdentifierHeartRate" { s } else { nil } }
        #expect(heart.map(\.value) == [.quantity(DecimalValue(mantissa: 108, scale: 0), unit: "count/min")])
    }

    @Test func activeEnergyInKilojoules() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Self.folder + "/metrics-active-energy.json"])
        #expect(report.added == 2 && report.rejected == 0)
        let total = try t.vault.summary(metric: "active-energy", by: .day).map(\.value).reduce(0, +)
        #expect(abs(total - 0.274) < 0.0005, "\(total)")
    }
}
