/// The consent categories of the spec. Every HealthKit type maps to exactly one; a type not in
/// the table is kept under `other` with its identifier. The table is docs/health-model.md's.
public enum HealthCategory: String, CaseIterable, Sendable, Codable {
    case activity, heart, sleep, body, vitals, workouts, location, nutrition, mindfulness
    case reproductive, clinical, profile, other

    /// The category of a HealthKit type identifier (`HKQuantityTypeIdentifierStepCount`).
    public static func of(type identifier: String) -> HealthCategory {
        let short = HealthTypes.shortName(identifier)
        if let category = table[short] { return category }
        if short.hasPrefix("Dietary") { return .nutrition }
        if identifier.hasPrefix("HKClinicalTypeIdentifier") { return .clinical }
        if identifier.hasPrefix("HKCharacteristicTypeIdentifier") { return .profile }
        if identifier.hasPrefix("HKWorkoutActivityType") { return .workouts }
        return .other
    }

    private static let table: [String: HealthCategory] = {
        var t: [String: HealthCategory] = [:]
        func put(_ c: HealthCategory, _ names: [String]) { for n in names { t[n] = c } }
        put(.activity, ["StepCount", "DistanceWalkingRunning", "DistanceCycling", "DistanceSwimming", "DistanceWheelchair",
                        "DistanceDownhillSnowSports", "DistanceRowing", "DistancePaddleSports", "DistanceCrossCountrySkiing",
                        "DistanceSkatingSports", "FlightsClimbed", "ActiveEnergyBurned", "BasalEnergyBurned",
                        "AppleExerciseTime", "AppleStandTime", "AppleMoveTime", "AppleStandHour", "PushCount",
                        "SwimmingStrokeCount", "NikeFuel", "PhysicalEffort", "RunningSpeed", "RunningPower",
                        "RunningStrideLength", "RunningVerticalOscillation", "RunningGroundContactTime", "CyclingSpeed",
                        "CyclingPower", "CyclingCadence", "CyclingFunctionalThresholdPower", "WalkingSpeed",
                        "WalkingStepLength", "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage",
                        "StairAscentSpeed", "StairDescentSpeed", "SixMinuteWalkTestDistance", "AppleWalkingSteadiness",
                        "AppleWalkingSteadinessEvent", "ActivitySummary", "TimeInDaylight"])
        put(.heart, ["HeartRate", "RestingHeartRate", "WalkingHeartRateAverage", "HeartRateVariabilitySDNN",
                     "HeartRateRecoveryOneMinute", "VO2Max", "HighHeartRateEvent", "LowHeartRateEvent",
                     "IrregularHeartRhythmEvent", "AtrialFibrillationBurden", "Electrocardiogram",
                     "LowCardioFitnessEvent", "PeripheralPerfusionIndex"])
        put(.sleep, ["SleepAnalysis", "SleepDurationGoal", "AppleSleepingBreathingDisturbances", "SleepApneaEvent"])
        put(.body, ["BodyMass", "BodyMassIndex", "BodyFatPercentage", "LeanBodyMass", "Height", "WaistCircumference"])
        put(.vitals, ["BloodPressureSystolic", "BloodPressureDiastolic", "BloodPressure", "OxygenSaturation",
                      "RespiratoryRate", "BodyTemperature", "BloodGlucose", "AppleSleepingWristTemperature",
                      "ForcedVitalCapacity", "ForcedExpiratoryVolume1", "PeakExpiratoryFlowRate", "BloodAlcoholContent",
                      "InhalerUsage", "InsulinDelivery", "ElectrodermalActivity"])
        put(.workouts, ["Workout", "WorkoutEvent", "WorkoutStatistics"])
        put(.location, ["WorkoutRoute"])
        put(.nutrition, ["Food", "NumberOfAlcoholicBeverages"])
        put(.mindfulness, ["MindfulSession", "StateOfMind"])
        put(.reproductive, ["MenstrualFlow", "IntermenstrualBleeding", "SexualActivity", "OvulationTestResult",
                            "CervicalMucusQuality", "BasalBodyTemperature", "Pregnancy", "Lactation", "Contraceptive",
                            "PregnancyTestResult", "ProgesteroneTestResult", "InfrequentMenstrualCycles",
                            "IrregularMenstrualCycles", "PersistentIntermenstrualBleeding", "ProlongedMenstrualPeriods"])
        put(.clinical, ["ClinicalRecord", "VisionPrescription"])
        put(.profile, ["Me", "DateOfBirth", "BiologicalSex", "BloodType", "FitzpatrickSkinType", "WheelchairUse",
                       "CardioFitnessMedicationsUse", "ActivityMoveMode"])
        return t
    }()
}

/// Helpers for HealthKit identifiers.
public enum HealthTypes {
    private static let prefixes = ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier",
                                   "HKDataTypeIdentifier", "HKCharacteristicTypeIdentifier", "HKClinicalTypeIdentifier"]

    /// `HKQuantityTypeIdentifierStepCount` → `StepCount`.
    public static func shortName(_ identifier: String) -> String {
        for prefix in prefixes where identifier.hasPrefix(prefix) { return String(identifier.dropFirst(prefix.count)) }
        return identifier
    }
}
