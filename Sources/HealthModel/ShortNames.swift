/// A short name for every HealthKit type the catalog lists (`blood-glucose`, `mindful`,
/// `sleep`), what `types` prints and `summary` takes. A HealthKit identifier is accepted wherever
/// a short name is.
///
/// The metric names (`MetricNames`: `steps`, `hrv`, ...) come first; the rest are the
/// identifier without its family prefix in lowercase words (`HKQuantityTypeIdentifierBloodGlucose`
/// → `blood-glucose`), with the few overrides below where the plain rule reads badly.
public enum ShortNames {
    /// The short name of an identifier; nil for one the catalog does not list.
    public static func short(for identifier: String) -> String? {
        if let known = byIdentifier[identifier] { return known }
        // Workouts by their activity: `HKWorkoutActivityTypeTraditionalStrengthTraining` → `traditional-strength-training`.
        let workout = "HKWorkoutActivityType"
        if identifier.hasPrefix(workout), identifier.count > workout.count { return words(String(identifier.dropFirst(workout.count))) }
        return nil
    }

    /// The identifier a short name stands for (case ignored); nil when none.
    public static func identifier(for name: String) -> String? {
        byName[name.lowercased()]
    }

    /// Every short name, sorted (for an error's list of what is known).
    public static var all: [String] { byName.keys.sorted() }

    /// Where the plain rule reads badly or a common word exists.
    private static let overrides: [String: String] = [
        "HKCategoryTypeIdentifierMindfulSession": "mindful",
        "HKCategoryTypeIdentifierSleepAnalysis": "sleep",
        "HKCategoryTypeIdentifierAppleStandHour": "stand-hour",
        "HKQuantityTypeIdentifierAppleMoveTime": "move-time",
        "HKQuantityTypeIdentifierVO2Max": "vo2max",
        "HKQuantityTypeIdentifierOxygenSaturation": "oxygen-saturation",
        "HKQuantityTypeIdentifierDietaryEnergyConsumed": "dietary-energy",
        "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": "hrv",
        "HKQuantityTypeIdentifierUVExposure": "uv-exposure",
        "HKQuantityTypeIdentifierNikeFuel": "nike-fuel",
        "HKCategoryTypeIdentifierHighHeartRateEvent": "high-heart-rate-event",
        "HKCategoryTypeIdentifierLowHeartRateEvent": "low-heart-rate-event",
        "HKCategoryTypeIdentifierIrregularHeartRhythmEvent": "irregular-rhythm-event",
        "HKDataTypeSleepDurationGoal": "sleep-duration-goal",
        "HKActivitySummaryTypeIdentifier": "activity-summary",
    ]

    private static let byIdentifier: [String: String] = {
        var table: [String: String] = [:]
        var taken = Set<String>()
        for (name, metric) in MetricNames.table {
            table[metric.identifier] = name
            taken.insert(name)
        }
        for (identifier, name) in overrides where table[identifier] == nil {
            table[identifier] = name
            taken.insert(name)
        }
        for entry in HealthKitCatalog.entries where table[entry.identifier] == nil {
            var name = words(HealthTypes.shortName(entry.identifier))
            // Two families can share a stem (a quantity and a category type): the later one says which.
            if taken.contains(name) { name += entry.identifier.hasPrefix("HKCategoryType") ? "-event" : "-type" }
            guard !taken.contains(name) else { continue }
            table[entry.identifier] = name
            taken.insert(name)
        }
        return table
    }()

    private static let byName: [String: String] = Dictionary(byIdentifier.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })

    /// `BloodGlucose` → `blood-glucose`; runs of capitals stay one word (`SDNN`, `UV`).
    public static func words(_ camel: String) -> String {
        var out = ""
        let chars = Array(camel)
        for (i, c) in chars.enumerated() {
            if c.isUppercase, i > 0 {
                let previousLower = chars[i - 1].isLowercase || chars[i - 1].isNumber
                let nextLower = i + 1 < chars.count && chars[i + 1].isLowercase
                if previousLower || (chars[i - 1].isUppercase && nextLower) { out.append("-") }
            }
            out.append(contentsOf: c.lowercased())
        }
        return out
    }
}
