import Testing
@testable import HealthModel

/// The health model on its own, without a vault: every documented type in its category, names
/// apps write matched or refused, dates in every form Apple's exports used.
@Suite struct HealthModelTests {
    @Test func everyCatalogEntryIsListedOnceAndMapsToItsCategory() {
        let identifiers = HealthKitCatalog.entries.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
        #expect(identifiers.count >= 220)
        for entry in HealthKitCatalog.entries {
            #expect(HealthCategory.of(type: entry.identifier) == entry.category, "\(entry.identifier)")
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
