import Foundation
import Testing
@testable import HealthModel

/// The health model on its own, without a vault: every documented type in its category, names
/// apps write matched or refused, dates in every form Apple's exports used.
@Suite struct HealthModelTests {
    @Test func everyCatalogEntryIsListedOnceAndMapsToItsCategory() {
        let identifiers = HealthKitCatalog.entries.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
        for entry in HealthKitCatalog.entries {
            #expect(HealthCategory.of(type: entry.identifier) == entry.category, "\(entry.identifier)")
        }
        // The code's catalogue against the table people consent by (docs/health-model.md), written
        // by hand: every type under the category the table names, and as many per category.
        let documented = Self.documentedCategories()
        #expect(documented.values.reduce(0) { $0 + $1.count } == identifiers.count)
        for entry in HealthKitCatalog.entries {
            let name = Self.shortName(entry.identifier)
            let listedUnder = documented.filter { $0.value.contains(name) }.map(\.key)
            #expect(listedUnder == [entry.category.rawValue], "\(entry.identifier) (\(name)) is \(entry.category) in the code, \(listedUnder) in the docs")
        }
        // Every category but `other`'s own list holds something, and `other` holds no heart,
        // sleep or reproductive word.
        // `trackers` holds what people log by hand, no HealthKit type.
        let used = Set(HealthKitCatalog.entries.map(\.category))
        #expect(used == Set(HealthCategory.allCases).subtracting([.trackers]))
        // Heartburn is digestive: "heart" in its name, rightly under other.
        for entry in HealthKitCatalog.entries where entry.category == .other && entry.identifier != "HKCategoryTypeIdentifierHeartburn" {
            #expect(HealthCategory.inferred(entry.identifier) == nil || HealthCategory.inferred(entry.identifier) == .mindfulness,
                    "\(entry.identifier) is under other but reads as \(String(describing: HealthCategory.inferred(entry.identifier)))")
        }
    }

    /// docs/health-model.md's category table: category → the short names it lists (its count
    /// column checked against the list).
    static func documentedCategories() -> [String: [String]] {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/health-model.md")
        let text = (try? String(contentsOf: docs, encoding: .utf8)) ?? ""
        var table: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let count = Int(cells[1]), HealthCategory(rawValue: cells[0]) != nil else { continue }
            let names = cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(names.count == count, "docs/health-model.md: \(cells[0]) says \(count), lists \(names.count)")
            table[cells[0]] = names
        }
        #expect(table.count == 13, "docs/health-model.md's category table has \(table.count) rows")
        return table
    }

    /// An identifier as the docs' table names it: without Apple's prefix.
    static func shortName(_ identifier: String) -> String {
        for prefix in ["_HKCharacteristicTypeIdentifier", "HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier",
                       "HKCharacteristicTypeIdentifier", "HKClinicalTypeIdentifier", "HKScoredAssessmentTypeIdentifier", "HKDocumentTypeIdentifier",
                       "HKMedicationDoseEventTypeIdentifier", "HKDataTypeIdentifier", "HKDataType"] where identifier.hasPrefix(prefix) {
            return String(identifier.dropFirst(prefix.count))
        }
        for (prefix, suffix) in [("HK", "TypeIdentifier")] where identifier.hasPrefix(prefix) && identifier.hasSuffix(suffix) {
            return String(identifier.dropFirst(prefix.count).dropLast(suffix.count))
        }
        return identifier
    }

    @Test func aCategorysOrdinalIsItsPlaceInAllCases() {
        #expect(HealthCategory.allCases.map(\.ordinal) == Array(0..<14))
        #expect(HealthCategory.allCases.count == 14)
    }

    @Test func theFindingsTypesHaveTheirCategories() {
        #expect(HealthCategory.of(type: "HKDataTypeSleepDurationGoal") == .sleep)
        #expect(HealthCategory.of(type: "HKCategoryTypeIdentifierBleedingDuringPregnancy") == .reproductive)
        #expect(HealthCategory.of(type: "HKCategoryTypeIdentifierBleedingAfterPregnancy") == .reproductive)
        #expect(HealthCategory.of(type: "HKCategoryTypeIdentifierHypertensionEvent") == .heart)
        #expect(HealthCategory.of(type: "HKCategoryTypeIdentifierRapidPoundingOrFlutteringHeartbeat") == .heart)
        #expect(HealthCategory.of(type: "HKCategoryTypeIdentifierSleepChanges") == .sleep)
        // Identifiers from a newer iOS go by their words, never to other when they read as such.
        #expect(HealthCategory.of(type: "HKQuantityTypeIdentifierHeartRateRecoveryTwoMinutes") == .heart)
        #expect(HealthCategory.of(type: "HKCategoryTypeIdentifierMenstrualSymptomScore") == .reproductive)
        #expect(HealthCategory.of(type: "HKQuantityTypeIdentifierSleepScore") == .sleep)
        #expect(HealthCategory.of(type: "HKQuantityTypeIdentifierNoiseIndex") == .other)
    }

    @Test func namesAppsWriteAreMatchedToTheirTypes() {
        #expect(TypeNames.resolve("heart_rate") == .known(identifier: "HKQuantityTypeIdentifierHeartRate", unit: "count/min"))
        #expect(TypeNames.resolve("HEART_RATE_VARIABILITY") == .known(identifier: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", unit: "ms"))
        #expect(TypeNames.resolve("SLEEP") == .known(identifier: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil))
        #expect(TypeNames.resolve("Sleep Analysis") == .known(identifier: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil))
        #expect(TypeNames.resolve("step count") == .known(identifier: "HKQuantityTypeIdentifierStepCount", unit: "count"))
        #expect(TypeNames.resolve("MENSTRUAL_FLOW") == .known(identifier: "HKCategoryTypeIdentifierMenstrualFlow", unit: nil))
        #expect(TypeNames.resolve("heart_stuff") == .refused(category: .heart, closest: "HeartRate"))
        #expect(TypeNames.resolve("period_pain_level") == .refused(category: .reproductive, closest: "PelvicPain"))
        #expect(TypeNames.resolve("noise_level") == .other("noise_level"))
        // Abbreviations apps use for heart, sleep and cycle data (found in review).
        #expect(TypeNames.resolve("HR") == .known(identifier: "HKQuantityTypeIdentifierHeartRate", unit: "count/min"))
        #expect(TypeNames.resolve("bpm") == .known(identifier: "HKQuantityTypeIdentifierHeartRate", unit: "count/min"))
        #expect(TypeNames.resolve("RHR") == .known(identifier: "HKQuantityTypeIdentifierRestingHeartRate", unit: "count/min"))
        #expect(TypeNames.resolve("BBT") == .known(identifier: "HKQuantityTypeIdentifierBasalBodyTemperature", unit: nil))
        #expect(TypeNames.resolve("EKG_reading") == .refused(category: .heart, closest: "HeartRate"))
        #expect(TypeNames.resolve("snoring_minutes") == .refused(category: .sleep, closest: "SleepAnalysis"))
        #expect(TypeNames.resolve("apnea_index") == .refused(category: .sleep, closest: "SleepApneaEvent"))
        // Names found in apps after review (issue 35): mapped where a type fits, else refused
        // with the nearest known name; short words only as whole words.
        #expect(TypeNames.resolve("resting_bpm") == .known(identifier: "HKQuantityTypeIdentifierRestingHeartRate", unit: "count/min"))
        #expect(TypeNames.resolve("restingPulse") == .known(identifier: "HKQuantityTypeIdentifierRestingHeartRate", unit: "count/min"))
        #expect(TypeNames.resolve("nap_minutes") == .refused(category: .sleep, closest: "SleepAnalysis"))
        #expect(TypeNames.resolve("insomniaScore") == .refused(category: .sleep, closest: "SleepAnalysis"))
        #expect(TypeNames.resolve("abortion_date") == .refused(category: .reproductive, closest: "MenstrualFlow"))
        #expect(TypeNames.resolve("IVF-transfer") == .refused(category: .reproductive, closest: "MenstrualFlow"))
        #expect(TypeNames.resolve("miscarriage") == .refused(category: .reproductive, closest: "MenstrualFlow"))
        #expect(TypeNames.resolve("afib_burden_pct") == .refused(category: .heart, closest: "AtrialFibrillationBurden"))
        #expect(TypeNames.resolve("snapshot_count") == .other("snapshot_count"))
        #expect(TypeNames.resolve("remaining_battery") == .other("remaining_battery"))
        #expect(TypeNames.resolve("chrome_tabs") == .other("chrome_tabs"))
    }

    @Test func compactAndSpacedDatesParseAlikeAndNothingElseDoes() {
        func parse(_ text: String) -> HealthTimestamp? { Array(text.utf8).withUnsafeBytes { HealthTimestamp.parseExportDate($0) } }
        #expect(parse("20141018163235+0100") == parse("2014-10-18 16:32:35 +0100"))
        #expect(parse("20141018163235-0530") == HealthTimestamp(seconds: 1_413_649_955 + 19_800, utcOffset: -19_800))
        for bad in ["2014101816323+01000", "20141018163235 0100", "20141018166035+0100", "20140230163235+0100", "2014-10-18T16:32:35+0100"] {
            #expect(parse(bad) == nil, "\(bad)")
        }
    }
}
