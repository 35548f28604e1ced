/// The codes other health systems read a type by: LOINC (for FHIR R4 Observations) and Open
/// mHealth schemas, where one exists for the type, with the unit each expects
/// (docs/bundle-format.md, "FHIR and Open mHealth"). A type without one keeps its HealthKit name
/// under healthvault's own code system.
public enum StandardCodes {
    public struct LOINC: Sendable, Equatable {
        public var code: String
        public var display: String
    }

    public struct OMHSchema: Sendable, Equatable {
        public var name: String
        public var version: String
        /// The body's member holding the value (`step_count`, `heart_rate`).
        public var member: String
        /// Whether the member is a number (`step_count`) rather than a unit-value pair.
        public var bare: Bool
        public var unit: String
    }

    /// LOINC of a raw reading of `type`; `daily` asks for the day's total where LOINC has one
    /// (steps in 24 hours).
    public static func loinc(type: String, daily: Bool = false) -> LOINC? {
        if daily, type == "HKQuantityTypeIdentifierStepCount" { return LOINC(code: "41950-7", display: "Number of steps in 24 hour Measured") }
        return loincTable[type]
    }

    public static func omh(type: String) -> OMHSchema? { omhTable[type] }

    /// The UCUM code of a unit as the vault writes it (`count/min` → `/min`, `degC` → `Cel`).
    public static func ucum(_ unit: String, type: String) -> String {
        switch unit {
        case "count": return type == "HKQuantityTypeIdentifierStepCount" ? "{steps}" : "1"
        case "count/min": return "/min"
        case "degC": return "Cel"
        case "degF": return "[degF]"
        case "mmHg": return "mm[Hg]"
        // A set's repetitions: a count, with UCUM's annotation saying of what.
        case "reps": return "{repetitions}"
        default: return unit
        }
    }

    private static let loincTable: [String: LOINC] = [
        "HKQuantityTypeIdentifierStepCount": LOINC(code: "55423-8", display: "Number of steps in unspecified time Pedometer"),
        "HKQuantityTypeIdentifierHeartRate": LOINC(code: "8867-4", display: "Heart rate"),
        "HKQuantityTypeIdentifierRestingHeartRate": LOINC(code: "40443-4", display: "Heart rate --resting"),
        "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": LOINC(code: "80404-7", display: "R-R interval.standard deviation (Heart rate variability)"),
        "HKQuantityTypeIdentifierActiveEnergyBurned": LOINC(code: "41981-2", display: "Calories burned"),
        "HKQuantityTypeIdentifierBodyMass": LOINC(code: "29463-7", display: "Body weight"),
        "HKQuantityTypeIdentifierHeight": LOINC(code: "8302-2", display: "Body height"),
        "HKQuantityTypeIdentifierBodyMassIndex": LOINC(code: "39156-5", display: "Body mass index (BMI) [Ratio]"),
        "HKQuantityTypeIdentifierBodyFatPercentage": LOINC(code: "41982-0", display: "Percentage of body fat Measured"),
        "HKQuantityTypeIdentifierBodyTemperature": LOINC(code: "8310-5", display: "Body temperature"),
        "HKQuantityTypeIdentifierRespiratoryRate": LOINC(code: "9279-1", display: "Respiratory rate"),
        "HKQuantityTypeIdentifierOxygenSaturation": LOINC(code: "59408-5", display: "Oxygen saturation in Arterial blood by Pulse oximetry"),
        "HKQuantityTypeIdentifierBloodPressureSystolic": LOINC(code: "8480-6", display: "Systolic blood pressure"),
        "HKQuantityTypeIdentifierBloodPressureDiastolic": LOINC(code: "8462-4", display: "Diastolic blood pressure"),
        "HKQuantityTypeIdentifierBloodGlucose": LOINC(code: "2339-0", display: "Glucose [Mass/volume] in Blood"),
        "HKQuantityTypeIdentifierAppleExerciseTime": LOINC(code: "55411-3", display: "Exercise duration"),
        "HKCategoryTypeIdentifierSleepAnalysis": LOINC(code: "93832-4", display: "Sleep duration"),
    ]

    private static let omhTable: [String: OMHSchema] = [
        "HKQuantityTypeIdentifierStepCount": OMHSchema(name: "step-count", version: "2.0", member: "step_count", bare: true, unit: "steps"),
        "HKQuantityTypeIdentifierHeartRate": OMHSchema(name: "heart-rate", version: "1.1", member: "heart_rate", bare: false, unit: "beats/min"),
        "HKQuantityTypeIdentifierActiveEnergyBurned": OMHSchema(name: "calories-burned", version: "2.0", member: "kcal_burned", bare: false, unit: "kcal"),
        "HKQuantityTypeIdentifierBodyMass": OMHSchema(name: "body-weight", version: "1.0", member: "body_weight", bare: false, unit: "kg"),
        "HKQuantityTypeIdentifierHeight": OMHSchema(name: "body-height", version: "1.0", member: "body_height", bare: false, unit: "cm"),
        "HKQuantityTypeIdentifierBodyMassIndex": OMHSchema(name: "body-mass-index", version: "1.0", member: "body_mass_index", bare: false, unit: "kg/m2"),
        "HKQuantityTypeIdentifierBodyTemperature": OMHSchema(name: "body-temperature", version: "2.0", member: "body_temperature", bare: false, unit: "C"),
        "HKQuantityTypeIdentifierRespiratoryRate": OMHSchema(name: "respiratory-rate", version: "1.0", member: "respiratory_rate", bare: false, unit: "breaths/min"),
        "HKQuantityTypeIdentifierOxygenSaturation": OMHSchema(name: "oxygen-saturation", version: "1.0", member: "oxygen_saturation", bare: false, unit: "%"),
        "HKQuantityTypeIdentifierBloodGlucose": OMHSchema(name: "blood-glucose", version: "2.0", member: "blood_glucose", bare: false, unit: "mg/dL"),
        "HKCategoryTypeIdentifierSleepAnalysis": OMHSchema(name: "sleep-duration", version: "2.0", member: "sleep_duration", bare: false, unit: "min"),
    ]
}
