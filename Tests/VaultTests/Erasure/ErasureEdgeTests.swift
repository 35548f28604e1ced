import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import Testing
@testable import Vault
import VaultTestSupport

/// Erasure at a month's edges (issue 35): a span that began in a live month and runs into an
/// erased one does not leave for its erased part, no day of an erased month gives a figure, and
/// the names an erased month brought in leave the read models with it, at once.
@Suite struct ErasureEdgeTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// A night from the last evening of January into February, 200 steps across that midnight,
    /// and February's own samples from a source and of a type nothing else has.
    static func vault() throws -> ImportTestVault {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("edges.csv", """
            type,start,end,value,unit,source
            HKCategoryTypeIdentifierSleepAnalysis,2024-01-31T22:00:00Z,2024-02-01T06:00:00Z,HKCategoryValueSleepAnalysisAsleepCore,,Band
            HKCategoryTypeIdentifierSleepAnalysis,2024-02-10T22:00:00Z,2024-02-11T06:00:00Z,HKCategoryValueSleepAnalysisAsleepCore,,Band
            steps,2024-01-31T23:00:00Z,2024-02-01T01:00:00Z,200,count,Band
            steps,2024-01-30T10:00:00Z,2024-01-30T11:00:00Z,500,count,Band
            steps,2024-02-05T10:00:00Z,2024-02-05T11:00:00Z,300,count,February Only Pedometer
            flights,2024-02-06T10:00:00Z,2024-02-06T11:00:00Z,4,count,Band

            """)], timeZone: Self.utc)
        return t
    }

    @Test func aSpanFromALiveMonthIsCutWhereTheErasedMonthBegins() throws {
        let t = try Self.vault()
        _ = try t.vault.erase(categories: [.sleep, .activity], from: LocalMonth(year: 2024, month: 2), to: LocalMonth(year: 2024, month: 2))
        let shared = try SharedLines(t)
        let raw = try shared.export([.sleep, .activity], from: nil, to: nil)
        let sleep = raw.lines(.sleep)
        #expect(sleep.count == 1)
        #expect(sleep.first?["start"] as? String == "2024-01-31T22:00:00+00:00" && sleep.first?["end"] as? String == "2024-02-01T00:00:00+00:00"
                && sleep.first?["clipped"] as? Bool == true, "\(sleep)")
        let steps = raw.lines(.activity).filter { $0["type"] as? String == "HKQuantityTypeIdentifierStepCount" }
            .map { "\($0["start"]!)/\($0["end"]!)=\($0["value"]!)" }.sorted()
        #expect(steps == ["2024-01-30T10:00:00+00:00/2024-01-30T11:00:00+00:00=500", "2024-01-31T23:00:00+00:00/2024-02-01T00:00:00+00:00=100"])

        // Daily figures: January's days, nothing of February (the step split at midnight included).
        let daily = try shared.export([.activity], from: nil, to: nil, granularity: .daily).lines(.activity)
        let days = Set(daily.compactMap { $0["period"] as? String })
        #expect(days == ["2024-01-30", "2024-01-31"], "\(days.sorted())")
        let hourly = try shared.export([.activity], from: nil, to: nil, granularity: .hourly).lines(.activity)
        #expect(hourly.allSatisfy { ($0["period"] as? String ?? "").hasPrefix("2024-01") } && !hourly.isEmpty)
    }

    @Test func namesAnErasedMonthBroughtInLeaveTheReadModelsAtOnce() throws {
        let t = try Self.vault()
        func column(_ sql: String) throws -> [String] {
            try t.vault.query(sql).rows.map { row in
                guard case .text(let text) = row[0] else { return "\(row[0])" }
                return text
            }
        }
        #expect(try column("SELECT name FROM sources ORDER BY name") == ["Band", "February Only Pedometer"])
        #expect(try column("SELECT identifier FROM metrics ORDER BY identifier").contains("HKQuantityTypeIdentifierFlightsClimbed"))
        _ = try t.vault.erase(categories: [.activity], from: LocalMonth(year: 2024, month: 2), to: LocalMonth(year: 2024, month: 2))
        #expect(try column("SELECT name FROM sources ORDER BY name") == ["Band"])
        #expect(try column("SELECT identifier FROM metrics ORDER BY identifier") == ["HKQuantityTypeIdentifierStepCount"])
        // As a rebuild has them.
        try t.vault.rebuildProjections()
        #expect(try column("SELECT name FROM sources ORDER BY name") == ["Band"])
        #expect(try column("SELECT identifier FROM metrics ORDER BY identifier") == ["HKQuantityTypeIdentifierStepCount"])
    }
}

/// Raw lines say where a sample came from (issue 36): the app, the device's model and class, the
/// metadata; never a name the person gave a device.
@Suite struct RawLineSourceTests {
    @Test func aRawLineCarriesItsSourceDeviceAndMetadataButNoPersonalName() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("export.xml", export("""
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Anna’s Apple Watch" sourceVersion="10.1" device="&lt;&lt;HKDevice: 0x1&gt;, name:Anna’s Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:10.1&gt;" unit="count" startDate="2024-03-05 08:00:00 +0100" endDate="2024-03-05 08:10:00 +0100" value="600"/>
            <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Anna’s iPhone" sourceVersion="17.1" device="&lt;&lt;HKDevice: 0x2&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,2, software:17.1&gt;" unit="count" startDate="2024-03-05 08:00:00 +0100" endDate="2024-03-05 08:10:00 +0100" value="650"/>
            <Record type="HKQuantityTypeIdentifierDietaryEnergyConsumed" sourceName="Lose It!" unit="kcal" startDate="2024-03-05 08:00:00 +0100" endDate="2024-03-05 08:00:00 +0100" value="120">
             <MetadataEntry key="HKFoodType" value="Apple"/>
            </Record>
            """))])
        let shared = try SharedLines(t)
        let opened = try shared.export([.activity, .nutrition], from: nil, to: nil)
        let steps = opened.lines(.activity).sorted { ($0["value"] as! NSNumber).intValue < ($1["value"] as! NSNumber).intValue }
        #expect(steps.map { $0["source"] as? String } == ["Apple Watch", "iPhone"])
        #expect(steps.map { $0["device"] as? String } == ["Watch (Watch6,1)", "iPhone (iPhone14,2)"])
        #expect(steps.map { $0["deviceClass"] as? String } == ["watch", "phone"])
        let food = try #require(opened.lines(.nutrition).first)
        #expect(food["source"] as? String == "Lose It!" && food["deviceClass"] as? String == "other")
        #expect(food["metadata"] as? [String: String] == ["HKFoodType": "Apple"])
        // With the class, the person's total (the Watch's 600 over the iPhone's same minutes) is reproducible.
        #expect(steps.first { $0["deviceClass"] as? String == "watch" }?["value"] as? NSNumber == 600)
        #expect(try t.vault.summary(metric: "steps", by: .day).map(\.value) == [600])
        for file in try FileManager.default.contentsOfDirectory(atPath: opened.out + "/data") {
            #expect(!(try String(contentsOfFile: opened.out + "/data/" + file, encoding: .utf8)).contains("Anna"), "\(file)")
        }

        // FHIR and Open mHealth carry the same: FHIR as extensions named by the member, OMH as
        // `healthvault_` members of the body.
        for format in [StandardFormat.fhir, .omh] {
            let bundle = t.dir.path + "/\(format).bundle", out = t.dir.path + "/\(format)"
            _ = try t.vault.export(to: "lab", path: bundle, format: format, today: LocalDay(year: 2025, month: 1, day: 1))
            _ = try BundleReader.open(bundle, keyFile: shared.key + ".key", outputDirectory: out)
            let text = try String(contentsOfFile: out + "/data/nutrition.\(format == .fhir ? "fhir" : "omh").ndjson", encoding: .utf8)
            let first = try #require(text.split(separator: "\n").first)
            let line = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
            if format == .fhir {
                let extensions = try #require(line["extension"] as? [[String: Any]])
                let byURL = Dictionary(uniqueKeysWithValues: extensions.map { ($0["url"] as! String, $0["valueString"] as? String) })
                #expect(byURL["urn:healthvault:field:source"] == "Lose It!")
                #expect(byURL["urn:healthvault:field:deviceClass"] == "other")
                #expect(byURL["urn:healthvault:field:metadata"]??.contains("\"HKFoodType\":\"Apple\"") == true, "\(byURL)")
            } else {
                let body = try #require(line["body"] as? [String: Any])
                #expect(body["healthvault_source"] as? String == "Lose It!")
                #expect(body["healthvault_metadata"] as? [String: String] == ["HKFoodType": "Apple"])
            }
            #expect(!text.contains("Anna"))
        }
    }
}
