import EventLog
import Foundation
@testable import HealthModel
import Testing
@testable import Vault
import VaultTestSupport

@Suite struct OtherFormatsTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    @Test func companionJSONImportsLocalTimesWithTheOffsetOfTheirDate() throws {
        let t = try ImportTestVault()
        let file = t.write("steps.json", """
        {"metric":"STEPS","data":[
          {"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38},
          {"timeRange":"2025-01-06 08:00/2025-01-06 09:00","value":12},
          {"timeRange":"2025-08-06 10:00/2025-08-06 09:00","value":5},
          {"timeRange":"yesterday","value":5},
          {"timeRange":"2025-08-06 11:00/2025-08-06 12:00","value":"many"},
          {"timeRange":"2025-08-06 12:00/2025-08-06 13:00","value":true}
        ]}
        """)
        let report = try t.vault.importFiles([file], timeZone: berlin)
        #expect(report.added == 2 && report.rejected == 4)
        #expect(report.files[0].format == "companion-json")
        #expect(report.files[0].warnings.contains("2 entries rejected: unparseable value (first at data[4])"))
        let samples = try t.samples()
        #expect(samples[0].type == "HKQuantityTypeIdentifierStepCount")
        #expect(samples[0].start.utcOffset == 7200 && samples[1].start.utcOffset == 3600) // summer and winter time
        #expect(samples[0].start.seconds == 1_754_460_000) // 2025-08-06T06:00:00Z
        #expect(samples[0].value == .quantity(DecimalValue(mantissa: 38, scale: 0), unit: "count"))
        #expect(try t.vault.importFiles([file], timeZone: berlin).duplicates == 2)
    }

    @Test func companionJSONArraysAndUnknownMetricsAndBrokenJSON() throws {
        let t = try ImportTestVault()
        let file = t.write("posts.json", """
        [{"metric":"HEART_RATE","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 08:00","value":61}]},
         {"metric":"NOISE_LEVEL","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 08:00","value":7.5}]}]
        """)
        let report = try t.vault.importFiles([file], timeZone: berlin)
        #expect(report.added == 2)
        #expect(report.files[0].warnings == ["kept under other, which only a grant of other shares: NOISE_LEVEL (1)"])
        let types = try t.samples().map(\.type)
        #expect(types == ["HKQuantityTypeIdentifierHeartRate", "NOISE_LEVEL"])
        #expect(try t.samples()[1].category == .other)
        let broken = t.write("broken.json", "{\"metric\":\"STEPS\",\"data\":[{\"timeRange\":")
        #expect { _ = try t.vault.importFiles([broken]) } throws: { "\($0)".hasPrefix(broken + ":1:40: not valid JSON: ") && "\($0)".hasSuffix("; nothing was imported") }
    }

    @Test func csvRowsWithQuotingUnitsCategoriesAndRejects() throws {
        let t = try ImportTestVault()
        let file = t.write("samples.csv", """
        type,start,end,value,unit,source\r
        steps,2025-08-06 08:00,2025-08-06 09:00,38,count,"Pedometer, v2"\r
        active-energy,2025-08-06T08:00:00+02:00,2025-08-06T09:00:00+02:00,10,kJ,Band\r
        HKCategoryTypeIdentifierSleepAnalysis,2025-08-05 23:00:00 +0200,2025-08-06 07:00:00 +0200,HKCategoryValueSleepAnalysisAsleepCore,,Band\r
        steps,2025-08-06 10:00,2025-08-06 09:00,5,count,Pedometer\r
        steps,not a date,2025-08-06 09:00,5,count,Pedometer\r
        distance,2025-08-06 08:00,2025-08-06 09:00,1.5,km,\r

        """)
        let report = try t.vault.importFiles([file], timeZone: berlin)
        #expect(report.files[0].format == "csv")
        #expect(report.added == 4 && report.rejected == 2)
        #expect(report.files[0].warnings.contains("1 row(s) rejected: unparseable date (first at line 6)"))
        // The log groups samples by category and month (their keys); find each by its type.
        let samples = try t.samples()
        func sample(_ type: String) -> HealthSample? { samples.first { $0.type == type } }
        #expect(sample("HKQuantityTypeIdentifierStepCount")?.source.name == "Pedometer, v2")
        if case .quantity(let v, "kcal")? = sample("HKQuantityTypeIdentifierActiveEnergyBurned")?.value { #expect(abs(v.double - 2.39) < 0.01) } else { Issue.record("kJ") }
        #expect(sample("HKCategoryTypeIdentifierSleepAnalysis")?.value == .category("HKCategoryValueSleepAnalysisAsleepCore"))
        #expect(sample("HKQuantityTypeIdentifierDistanceWalkingRunning")?.value == .quantity(DecimalValue(mantissa: 1500, scale: 0), unit: "m"))
        #expect(sample("HKQuantityTypeIdentifierDistanceWalkingRunning")?.source.name == "CSV import")
    }

    @Test func aCSVWithoutTheRequiredHeaderIsRefusedAtLineOne() throws {
        let t = try ImportTestVault()
        let file = t.write("bad.csv", "when,what\n2025-08-06,38\n")
        #expect(throws: ImportError.notWellFormed(path: file, location: SourceLocation(line: 1, column: 1), message: "CSV header must name type,start,end,value (missing type,start,end,value), or be daily totals: a date column and a column per metric (Date,Step Count)")) {
            _ = try t.vault.importFiles([file])
        }
    }
}
