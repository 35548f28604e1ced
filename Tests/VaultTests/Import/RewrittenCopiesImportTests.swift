import Foundation
@testable import HealthModel
import Projections
import Testing
@testable import Vault
import VaultTestSupport

/// Issue 36, item 6: an app that writes the same samples again (identical but for `creationDate`,
/// a second apart) has them counted once in every total, while the log keeps every copy; distinct
/// samples that happen to share value and time stay apart.
@Suite struct RewrittenCopiesImportTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// One record as Apple writes it, by an app on the phone.
    static func record(_ type: String, unit: String, value: String, start: String, end: String, created: String, metadata: String = "") -> String {
        let head = #" <Record type="\#(type)" sourceName="Pacer" sourceVersion="8.4" device="&lt;&lt;HKDevice: 0x2813&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,2, software:17.1&gt;" unit="\#(unit)" creationDate="\#(created)" startDate="\#(start)" endDate="\#(end)" value="\#(value)""#
        return metadata.isEmpty ? head + "/>" : head + ">\n" + metadata + "\n </Record>"
    }

    static let energy = "HKQuantityTypeIdentifierActiveEnergyBurned"
    static let distance = "HKQuantityTypeIdentifierDistanceWalkingRunning"
    static let food = "HKQuantityTypeIdentifierDietaryEnergyConsumed"
    static let water = "HKQuantityTypeIdentifierDietaryWater"

    /// 17 copies of a 15-minute energy sample (42.5 kcal) and 5 of its distance (0.61 km), each
    /// created a second after the one before; one more energy sample of 10 kcal; two foods of 95
    /// kcal logged at the same minute (apart by `HKFoodType`); two glasses of water logged at once
    /// (identical to the creation date).
    static var body: String {
        var lines: [String] = []
        for copy in 0..<17 {
            lines.append(record(energy, unit: "kcal", value: "42.5", start: "2024-05-06 08:00:00 +0000", end: "2024-05-06 08:15:00 +0000",
                                created: "2024-05-06 09:00:\(String(format: "%02d", copy)) +0000"))
        }
        for copy in 0..<5 {
            lines.append(record(distance, unit: "km", value: "0.61", start: "2024-05-06 08:00:00 +0000", end: "2024-05-06 08:15:00 +0000",
                                created: "2024-05-06 09:00:\(String(format: "%02d", copy)) +0000"))
        }
        lines.append(record(energy, unit: "kcal", value: "10", start: "2024-05-06 08:15:00 +0000", end: "2024-05-06 08:30:00 +0000",
                            created: "2024-05-06 09:00:00 +0000"))
        for (second, name) in [(0, "Apple"), (1, "Banana")] {
            lines.append(record(food, unit: "kcal", value: "95", start: "2024-05-06 12:00:00 +0000", end: "2024-05-06 12:00:00 +0000",
                                created: "2024-05-06 12:00:0\(second) +0000",
                                metadata: #"  <MetadataEntry key="HKFoodType" value="\#(name)"/>"#))
        }
        for _ in 0..<2 {
            lines.append(record(water, unit: "mL", value: "250", start: "2024-05-06 13:00:00 +0000", end: "2024-05-06 13:00:00 +0000",
                                created: "2024-05-06 13:00:00 +0000"))
        }
        return lines.joined(separator: "\n")
    }

    @Test func copiesCountOnceEverywhereAndTheLogKeepsThemAll() throws {
        let t = try ImportTestVault()
        let path = t.write("export.xml", export(Self.body))
        let report = try t.vault.importFiles([path], timeZone: Self.utc)
        // 17 + 5 + 1 + 2 + 2 records: all kept; 16 + 4 of them rewrites.
        #expect(report.added == 27 && report.duplicates == 0 && report.rejected == 0)
        #expect(report.rewrites == 20)
        #expect(try t.samples().count == 27)

        func dayTotal(_ type: String) throws -> Double? { try t.vault.summary(metric: type, by: .day).first?.value }
        #expect(try dayTotal(Self.energy) == 52.5)
        #expect(try dayTotal(Self.distance) == 610)
        #expect(try dayTotal(Self.food) == 190)
        #expect(try dayTotal(Self.water) == 500)
        #expect(try t.vault.rings().first?.move == 52.5)

        // Importing the file again adds nothing, and no rewrite.
        let again = try t.vault.importFiles([path], timeZone: Self.utc)
        #expect(again.added == 0 && again.duplicates == 27 && again.rewrites == 0)

        // A later export where the app wrote the sample once more: one more rewrite, same total.
        let later = t.write("later.xml", export(Self.record(Self.energy, unit: "kcal", value: "42.5", start: "2024-05-06 08:00:00 +0000",
                                                            end: "2024-05-06 08:15:00 +0000", created: "2024-05-07 07:00:00 +0000")))
        let more = try t.vault.importFiles([later], timeZone: Self.utc)
        #expect(more.added == 1 && more.rewrites == 1)
        #expect(try dayTotal(Self.energy) == 52.5)

        // A rebuild from the log gives the same totals.
        try t.vault.rebuildProjections()
        #expect(try dayTotal(Self.energy) == 52.5)
        #expect(try dayTotal(Self.distance) == 610)
    }

    @Test func hourlyAndDailyBundlesCountCopiesOnceAndRawLinesHoldEveryCopy() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("export.xml", export(Self.body))], timeZone: Self.utc)
        let shared = try SharedLines(t)
        let hourly = try shared.export([.activity], from: nil, to: nil, granularity: .hourly).lines(.activity)
        let energyHour = try #require(hourly.first { $0["metric"] as? String == Self.energy && $0["period"] as? String == "2024-05-06T08" })
        #expect(energyHour["value"] as? NSNumber == 52.5)
        let daily = try shared.export([.activity], from: nil, to: nil, granularity: .daily).lines(.activity)
        let energyDay = try #require(daily.first { $0["metric"] as? String == Self.energy })
        #expect(energyDay["value"] as? NSNumber == 52.5)
        let raw = try shared.export([.activity], from: nil, to: nil).lines(.activity)
        #expect(raw.filter { $0["type"] as? String == Self.energy }.count == 18)
    }

    /// `record_metadata` follows what the vault holds: a re-posted value (Health Auto Export's
    /// upsert) takes the replaced reading's entries off, an erase takes its month's off, and a
    /// rebuild from the log gives the same rows.
    @Test func metadataRowsFollowReplacementsAndErasure() throws {
        let t = try ImportTestVault()
        func post(_ min: Int, _ avg: Double, _ max: Int) -> String {
            t.write("hr-\(min).json", """
                {"data":{"metrics":[{"name":"heart_rate","units":"count/min","data":[{"date":"2024-03-05 08:00:00 +0100","Min":\(min),"Avg":\(avg),"Max":\(max)}]}]}}
                """)
        }
        func rows() throws -> [String] {
            try t.vault.query("SELECT key, value, date, records FROM metadata_by_day ORDER BY key, value").rows.map { row in
                row.map { value -> String in
                    switch value {
                    case .text(let s): s
                    case .integer(let n): "\(n)"
                    default: "?"
                    }
                }.joined(separator: " ")
            }
        }
        _ = try t.vault.importFiles([post(52, 63.5, 88)], timeZone: Self.utc)
        #expect(try rows() == ["Max 88 2024-03-05 1", "Min 52 2024-03-05 1"])
        let replaced = try t.vault.importFiles([post(50, 60, 90)], timeZone: Self.utc)
        #expect(replaced.replaced == 1)
        #expect(try rows() == ["Max 90 2024-03-05 1", "Min 50 2024-03-05 1"])
        try t.vault.rebuildProjections()
        #expect(try rows() == ["Max 90 2024-03-05 1", "Min 50 2024-03-05 1"])
        _ = try t.vault.erase(categories: [.heart], from: LocalMonth(year: 2024, month: 3), to: LocalMonth(year: 2024, month: 3))
        #expect(try rows() == [])
    }
}
