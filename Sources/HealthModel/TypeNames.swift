/// What a type name written in a CSV row or a companion app's post stands for.
///
/// People and apps spell types many ways (`heart_rate`, `HEART_RATE_VARIABILITY`, `Sleep`). A name
/// is matched, in order, as a short name or HealthKit identifier, then with case, `_`, `-` and
/// spaces ignored against every short name, HealthKit type and common alias. A name that matches
/// nothing but reads as heart, sleep or reproductive data is refused: kept under `other` it would
/// leave the vault with a grant of `other`. Anything else is kept under `other` with its own
/// name, and the import says so.
public enum TypeNames {
    public enum Resolution: Equatable {
        /// A known type, with the unit its values are in when the name implies one.
        case known(identifier: String, unit: String?)
        /// Kept under `other` with this name.
        case other(String)
        /// Refused: it resembles data of `category` but is no type this build knows.
        case refused(category: HealthCategory)
    }

    public static func resolve(_ name: String) -> Resolution {
        if let metric = MetricNames.metric(name) { return .known(identifier: metric.identifier, unit: metric.unit) }
        if catalogIdentifiers.contains(name) { return .known(identifier: name, unit: nil) }
        let key = normalized(name)
        if let identifier = loose[key] {
            return .known(identifier: identifier, unit: MetricNames.table.values.first { $0.identifier == identifier }?.unit)
        }
        if let category = HealthCategory.inferred(name), [.heart, .sleep, .reproductive].contains(category) {
            return .refused(category: category)
        }
        return .other(name)
    }

    /// Lowercase letters and digits only: `HEART_RATE` and `heart-rate` are `heartrate`.
    public static func normalized(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }.map(Character.init))
    }

    private static let catalogIdentifiers = Set(HealthKitCatalog.entries.map(\.identifier))

    /// Aliases apps use that are not a type's own name.
    private static let aliases: [String: String] = [
        "step": "HKQuantityTypeIdentifierStepCount",
        "calories": "HKQuantityTypeIdentifierActiveEnergyBurned",
        "activecalories": "HKQuantityTypeIdentifierActiveEnergyBurned",
        "pulse": "HKQuantityTypeIdentifierHeartRate",
        "hr": "HKQuantityTypeIdentifierHeartRate",
        "bpm": "HKQuantityTypeIdentifierHeartRate",
        "rhr": "HKQuantityTypeIdentifierRestingHeartRate",
        "bbt": "HKQuantityTypeIdentifierBasalBodyTemperature",
        "heartratevariability": "HKQuantityTypeIdentifierHeartRateVariabilitySDNN",
        "sleep": "HKCategoryTypeIdentifierSleepAnalysis",
        "weight": "HKQuantityTypeIdentifierBodyMass",
        "spo2": "HKQuantityTypeIdentifierOxygenSaturation",
        "bloodoxygen": "HKQuantityTypeIdentifierOxygenSaturation",
        "restinghr": "HKQuantityTypeIdentifierRestingHeartRate",
        "mindfulness": "HKCategoryTypeIdentifierMindfulSession",
    ]

    /// Normalized short names, HealthKit short names and aliases to identifiers.
    private static let loose: [String: String] = {
        var table: [String: String] = [:]
        for entry in HealthKitCatalog.entries {
            table[normalized(entry.identifier)] = entry.identifier
            table[normalized(HealthTypes.shortName(entry.identifier))] = entry.identifier
        }
        for (name, metric) in MetricNames.table { table[normalized(name)] = metric.identifier }
        for (alias, identifier) in aliases { table[alias] = identifier }
        return table
    }()
}
