import Foundation
@testable import HealthModel
import Testing
import VaultTestSupport
@testable import Vault

/// `types` (issue 16): everything imported is visible, with its count, days, category and the
/// unit it is read in; nutrients read in g and mg, glucose in mg/dL whatever unit it was written in.
@Suite struct HeldTypesTests {
    static let body = """
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1980-05-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-05-01 08:00:00 +0200" endDate="2024-05-01 08:10:00 +0200" value="250"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-05-03 08:00:00 +0200" endDate="2024-05-03 08:10:00 +0200" value="300"/>
         <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-05-01 23:10:00 +0200" endDate="2024-05-02 06:40:00 +0200" value="HKCategoryValueSleepAnalysisAsleepCore"/>
         <Record type="HKCategoryTypeIdentifierMindfulSession" sourceName="Watch" startDate="2024-05-02 12:00:00 +0200" endDate="2024-05-02 12:05:00 +0200"/>
         <Record type="HKQuantityTypeIdentifierDietaryProtein" sourceName="Food Log" unit="g" startDate="2024-05-02 13:00:00 +0200" endDate="2024-05-02 13:00:00 +0200" value="3"/>
         <Record type="HKQuantityTypeIdentifierDietarySodium" sourceName="Food Log" unit="mg" startDate="2024-05-02 13:00:00 +0200" endDate="2024-05-02 13:00:00 +0200" value="410"/>
         <Record type="HKQuantityTypeIdentifierBloodGlucose" sourceName="Meter" unit="mmol&lt;180.1558800000541&gt;/L" startDate="2024-05-02 07:00:00 +0200" endDate="2024-05-02 07:00:00 +0200" value="5.5"/>
         <Record type="HKQuantityTypeIdentifierBloodGlucose" sourceName="Meter" unit="mg/dL" startDate="2024-05-03 07:00:00 +0200" endDate="2024-05-03 07:00:00 +0200" value="101"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Watch" startDate="2024-05-04 08:00:00 +0200" endDate="2024-05-04 08:30:00 +0200">
          <WorkoutRoute sourceName="Watch">
           <Location date="2024-05-04 08:00:00 +0200" latitude="52.5" longitude="13.4"/>
          </WorkoutRoute>
         </Workout>
         <ActivitySummary dateComponents="2024-05-02" activeEnergyBurned="310" activeEnergyBurnedGoal="400" activeEnergyBurnedUnit="kcal" appleExerciseTime="20" appleExerciseTimeGoal="30" appleStandHours="9" appleStandHoursGoal="12"/>
         <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="a1" sourceName="Clinic" fhirVersion="4.0.1" receivedDate="2024-05-05 09:00:00 +0200" resourceFilePath="/clinical-records/a1.json"/>
        """

    @Test func everyImportedTypeIsListedWithItsCountDaysCategoryAndUnit() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("export.xml", export(Self.body))])
        let rows = try t.vault.heldTypes().map { "\($0.category.rawValue) \($0.type) \($0.unit ?? "-") \($0.count) \($0.first?.description ?? "-") \($0.last?.description ?? "-")" }
        #expect(rows == [
            "activity HKActivitySummaryTypeIdentifier - 1 2024-05-02 2024-05-02",
            "activity HKQuantityTypeIdentifierStepCount count 2 2024-05-01 2024-05-03",
            "clinical HKClinicalTypeIdentifierLabResultRecord - 1 2024-05-05 2024-05-05",
            "location HKWorkoutRouteTypeIdentifier - 1 2024-05-04 2024-05-04",
            "mindfulness HKCategoryTypeIdentifierMindfulSession - 1 2024-05-02 2024-05-02",
            "nutrition HKQuantityTypeIdentifierDietaryProtein g 1 2024-05-02 2024-05-02",
            "nutrition HKQuantityTypeIdentifierDietarySodium mg 1 2024-05-02 2024-05-02",
            "profile Me - 1 - -",
            "sleep HKCategoryTypeIdentifierSleepAnalysis - 1 2024-05-01 2024-05-01",
            "vitals HKQuantityTypeIdentifierBloodGlucose mg/dL 2 2024-05-02 2024-05-03",
            "workouts HKWorkoutActivityTypeRunning - 1 2024-05-04 2024-05-04",
        ])
        // Erasing a month of sleep, and the profile (undated), takes them out of the list, as a
        // rebuild would.
        _ = try t.vault.erase(categories: [.sleep], from: LocalMonth(year: 2024, month: 5), to: LocalMonth(year: 2024, month: 5))
        _ = try t.vault.erase(categories: [.profile])
        let afterErase = try t.vault.heldTypes()
        #expect(!afterErase.contains { $0.category == .sleep || $0.category == .profile })
        _ = try t.vault.rebuildProjections()
        #expect(try t.vault.heldTypes() == afterErase)
    }

    @Test func nutrientsReadInGramsAndMilligramsAndGlucoseIsOneSeriesInMgPerDL() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([t.write("export.xml", export(Self.body))])
        let protein = try t.vault.summary(metric: "dietary-protein", by: .day)
        #expect(protein.map(\.unit) == ["g"] && abs(protein[0].value - 3) < 1e-9)
        #expect(try t.vault.summary(metric: "dietary-sodium", by: .day).map(\.value).map { ($0 * 1e6).rounded() / 1e6 } == [410])
        let glucose = try t.vault.summary(metric: "blood-glucose", by: .month)
        // 5.5 mmol/L × 180.15588 g/mol / 10 = 99.0857 mg/dL, averaged with 101 mg/dL.
        #expect(glucose.count == 1 && glucose[0].unit == "mg/dL" && glucose[0].samples == 2)
        #expect(abs(glucose[0].min! - 99.0857) < 1e-3 && glucose[0].max == 101)
    }

    @Test func commonTypesHaveShortNames() {
        #expect(ShortNames.short(for: "HKQuantityTypeIdentifierBloodGlucose") == "blood-glucose")
        #expect(ShortNames.short(for: "HKQuantityTypeIdentifierBodyTemperature") == "body-temperature")
        #expect(ShortNames.short(for: "HKCategoryTypeIdentifierMindfulSession") == "mindful")
        #expect(ShortNames.short(for: "HKQuantityTypeIdentifierStepCount") == "steps")
        #expect(ShortNames.short(for: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN") == "hrv")
        #expect(ShortNames.identifier(for: "Blood-Glucose") == "HKQuantityTypeIdentifierBloodGlucose")
        // Every catalogued type has one, and no two share one.
        let names = HealthKitCatalog.entries.compactMap { ShortNames.short(for: $0.identifier) }
        #expect(names.count == Set(HealthKitCatalog.entries.map(\.identifier)).count)
        #expect(Set(names).count == names.count)
    }
}

/// Nothing imported is invisible (issue 16): routes, `Me`, clinical records and correlations
/// leave the vault in a raw bundle under their categories, and only inside the grant's period.
@Suite struct RecordExportTests {
    @Test func routesProfileClinicalRecordsAndCorrelationsAreExportedUnderTheirCategories() throws {
        let t = try ImportTestVault()
        let food = SampleIdentityTests.food("Pasta")
        _ = try t.vault.importFiles([t.write("export.xml", export(HeldTypesTests.body + "\n" + food))])
        let shared = try SharedLines(t)
        let opened = try shared.export([.location, .profile, .clinical, .nutrition], from: nil, to: nil)
        let route = opened.lines(.location)
        #expect(route.count == 1)
        #expect(route[0]["type"] as? String == "HKWorkoutRouteTypeIdentifier" && route[0]["start"] as? String == "2024-05-04T08:00:00+02:00"
                && route[0]["latitude"] as? Double == 52.5 && route[0]["longitude"] as? Double == 13.4 && route[0]["value"] is NSNull)
        let profile = opened.lines(.profile).map { "\($0["type"]!) \($0["value"]!) \($0["start"]!)" }
        #expect(profile == ["HKCharacteristicTypeIdentifierDateOfBirth 1980-05-01 <null>", "HKCharacteristicTypeIdentifierBiologicalSex HKBiologicalSexFemale <null>"])
        let clinical = opened.lines(.clinical)
        #expect(clinical.count == 1 && clinical[0]["type"] as? String == "HKClinicalTypeIdentifierLabResultRecord"
                && clinical[0]["element"] as? String == "ClinicalRecord" && clinical[0]["start"] as? String == "2024-05-05T09:00:00+02:00")
        #expect((clinical[0]["attributes"] as? [String: String])?["resourceFilePath"] == "/clinical-records/a1.json")
        let correlations = opened.lines(.nutrition).filter { $0["type"] as? String == "HKCorrelationTypeIdentifierFood" }
        #expect(correlations.count == 1 && (correlations[0]["metadata"] as? [String: String]) == ["HKFoodType": "Pasta"])
        // A period before the route, the clinical record and the meal keeps them out; Me has no date and stays.
        let april = try shared.export([.location, .profile, .clinical, .nutrition], from: LocalDay(year: 2024, month: 4, day: 1), to: LocalDay(year: 2024, month: 4, day: 30))
        #expect(april.lines(.location).isEmpty && april.lines(.clinical).isEmpty && april.lines(.nutrition).isEmpty)
        #expect(april.lines(.profile).count == 2)
    }
}
