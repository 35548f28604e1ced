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
        /// Refused: it resembles data of `category` but is no type this build knows; `closest` is
        /// the known name of that category nearest to it, to write instead.
        case refused(category: HealthCategory, closest: String)
    }

    public static func resolve(_ name: String) -> Resolution {
        if let metric = MetricNames.metric(name) { return .known(identifier: metric.identifier, unit: metric.unit) }
        if catalogIdentifiers.contains(name) { return .known(identifier: name, unit: nil) }
        let key = normalized(name)
        if let identifier = loose[key] {
            return .known(identifier: identifier, unit: MetricNames.table.values.first { $0.identifier == identifier }?.unit)
        }
        if let category = HealthCategory.inferred(name), [.heart, .sleep, .reproductive].contains(category) {
            return .refused(category: category, closest: closestKnownName(to: name, in: category))
        }
        return .other(name)
    }

    /// The known name of `category` to suggest for a refused one: among the short names and
    /// HealthKit short names of the category that share a word of four letters or more with it,
    /// the nearest by edit distance (ties: the shorter); else the category's most common type.
    static func closestKnownName(to name: String, in category: HealthCategory) -> String {
        let candidates = Array(Set(MetricNames.table.keys.filter { HealthCategory.of(type: MetricNames.table[$0]!.identifier) == category }
            + HealthKitCatalog.entries.filter { $0.category == category }.map { HealthTypes.shortName($0.identifier) })).sorted()
        let words = HealthCategory.words(of: name).filter { $0.count >= 4 }
        let target = Array(normalized(name).utf8)
        var best: (distance: Int, name: String)?
        for candidate in candidates {
            let key = normalized(candidate)
            guard words.contains(where: key.contains) else { continue }
            let distance = editDistance(target, Array(key.utf8))
            if best.map({ distance < $0.distance || (distance == $0.distance && candidate.count < $0.name.count) }) ?? true {
                best = (distance, candidate)
            }
        }
        return best?.name ?? headline[category] ?? category.rawValue
    }

    /// The type most data of a category is, suggested when no known name is near.
    private static let headline: [HealthCategory: String] = [.heart: "HeartRate", .sleep: "SleepAnalysis", .reproductive: "MenstrualFlow"]

    /// Levenshtein distance of two byte strings.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        var previous = Array(0...b.count), current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
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
        "restingbpm": "HKQuantityTypeIdentifierRestingHeartRate",
        "restingpulse": "HKQuantityTypeIdentifierRestingHeartRate",
        "hrv": "HKQuantityTypeIdentifierHeartRateVariabilitySDNN",
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
