import EventLog
import Foundation
@testable import HealthModel
import Testing
import VaultTestSupport
@testable import Vault

/// Exports no one on this project wrote: every record in them is accounted for.
@Suite struct ImportFixtureTests {
    @Test func dogsheepExportEveryRecordAccountedFor() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Fixtures.path("dogsheep/export.xml")])
        // 2 records, 1 workout, its inline route, 2 activity summaries, Me.
        #expect(report.added == 7 && report.rejected == 0 && report.duplicates == 0)
        let events = try t.dataEvents()
        let samples = try t.samples()
        #expect(samples.count == 2)
        let heart = try #require(samples.first { $0.type == "HKQuantityTypeIdentifierHeartRate" })
        #expect(heart.value == .quantity(DecimalValue(mantissa: 72, scale: 0), unit: "count/min"))
        #expect(heart.source.device?.model == "Watch")
        #expect(heart.source.device?.hardware == "Watch2,4")
        #expect(heart.start.utcOffset == -7 * 3600)
        let bmi = try #require(samples.first { $0.type == "HKQuantityTypeIdentifierBodyMassIndex" })
        #expect(bmi.metadata.contains { $0.value == "withings-bd2://timeline/measure?userid=12345&date=482685932&type=1" })
        guard case .workout(let workout) = try #require(events.first(where: { if case .workout = $0 { true } else { false } })) else { return }
        #expect(workout.activityType == "HKWorkoutActivityTypeRunning")
        // 0.4971749504535062 mi in metres.
        #expect(abs((workout.totalDistance?.double ?? 0) - 800.1256) < 0.001)
        let routes = events.compactMap { if case .route(let r) = $0 { r } else { nil } }
        #expect(routes.count == 1 && routes[0].points.count == 2)
        #expect(routes[0].points[0].latitude == 37.7777)
        let summaries = events.compactMap { if case .activitySummary(let a) = $0 { a } else { nil } }
        #expect(summaries.count == 2)
        let me = events.compactMap { if case .characteristics(let c) = $0 { c } else { nil } }
        #expect(me.first?.contains(MetadataEntry(key: "HKCharacteristicTypeIdentifierDateOfBirth", value: "1990-02-02")) == true)
    }

    @Test func alxdrciriloZipSkipsMacMetadataAndMatchesItsXML() throws {
        let t = try ImportTestVault()
        let zip = try t.vault.importFiles([Fixtures.path("alxdrcirilo/export.zip")])
        #expect(zip.added == 9 && zip.rejected == 0)
        #expect(zip.files[0].format == "apple-health-zip")
        // The same export as plain XML adds nothing.
        let xml = try t.vault.importFiles([Fixtures.path("alxdrcirilo/export.xml")])
        #expect(xml.added == 0 && xml.duplicates == 9)
        let stand = try t.samples().filter { $0.type == "HKQuantityTypeIdentifierAppleStandTime" }
        #expect(!stand.isEmpty && stand.allSatisfy { if case .quantity(_, "min") = $0.value { true } else { false } })
        let sleep = try t.samples().filter { $0.type == "HKCategoryTypeIdentifierSleepAnalysis" }
        #expect(sleep.allSatisfy { if case .category(let v) = $0.value { v.hasPrefix("HKCategoryValueSleepAnalysis") } else { false } })
    }

    @Test func jshrakeZipWithVersion12DTDStatisticsAndGPXRoute() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Fixtures.path("jshrake/export.zip")])
        // 10 activity summaries, 1 record, 1 workout, its GPX route.
        #expect(report.added == 13 && report.rejected == 0 && report.files[0].warnings.isEmpty)
        let events = try t.dataEvents()
        guard case .workout(let w) = try #require(events.first(where: { if case .workout = $0 { true } else { false } })) else { return }
        #expect(w.events.count == 4)
        let energy = try #require(w.statistics.first { $0.type == "HKQuantityTypeIdentifierActiveEnergyBurned" })
        #expect(energy.unit == "kcal" && energy.sum == DecimalValue(mantissa: 134432, scale: 3))
        #expect(w.routes.first?.filePath == "/workout-routes/route_2020-02-24_10.18am.gpx")
        #expect(w.source.device?.model == "Watch")
        let routes = events.compactMap { if case .route(let r) = $0 { r } else { nil } }
        #expect(routes.count == 1 && routes[0].points.count == 644)
        #expect(routes[0].points[0].longitude == -118.232524 && routes[0].points[0].latitude == 34.045088)
        #expect(routes[0].points[0].time == 1_582_567_245) // 2020-02-24T18:00:45Z
    }

    @Test func importingEverythingTwiceAddsNothingTheSecondTime() throws {
        let t = try ImportTestVault()
        let all = [Fixtures.path("dogsheep/export.xml"), Fixtures.path("alxdrcirilo/export.zip"), Fixtures.path("jshrake/export.zip")]
        let first = try t.vault.importFiles(all)
        let frames = t.vault.committed.sequence
        let second = try t.vault.importFiles(all)
        #expect(first.added == 29)
        #expect(second.added == 0 && second.duplicates == 29)
        // Only the three audit events of the second import were written.
        #expect(try t.vault.allEvents().filter { $0.event.kind == "import" }.count == 6)
        #expect(t.vault.committed.sequence == frames + 1)
        #expect(try Vault.verify(at: t.path, passphrase: passphrase("p")).isOK)
    }
}
