/// The consent categories of the spec. Every HealthKit type maps to exactly one; a type not in
/// the table is kept under `other` with its identifier. The table is docs/health-model.md's.
public enum HealthCategory: String, CaseIterable, Sendable, Codable {
    case activity, heart, sleep, body, vitals, workouts, location, nutrition, mindfulness
    case reproductive, clinical, profile, other
    /// Habits a person logs by hand (`vaultctl tracker`), unless the tracker names a HealthKit type.
    case trackers

    /// The category's place in `allCases` (0 for `activity`), to index a table by category
    /// without hashing its name (a `String`-backed enum hashes its raw value).
    public var ordinal: Int {
        switch self {
        case .activity: 0
        case .heart: 1
        case .sleep: 2
        case .body: 3
        case .vitals: 4
        case .workouts: 5
        case .location: 6
        case .nutrition: 7
        case .mindfulness: 8
        case .reproductive: 9
        case .clinical: 10
        case .profile: 11
        case .other: 12
        case .trackers: 13
        }
    }

    /// The category of a HealthKit type identifier (`HKQuantityTypeIdentifierStepCount`), an
    /// export element kept as a record (`Me`, `ClinicalRecord`), or a name a CSV or companion app
    /// used. Every type Apple documents is in `HealthKitCatalog`; an identifier it does not know
    /// (a newer iOS's, an app's own) goes by its family (`HKClinicalTypeIdentifier…` is clinical),
    /// then by the words in its name (`heart`, `sleep`, `menstrual`, ...), so heart, sleep and
    /// reproductive data never land in `other`; only what none of these place is `other`.
    public static func of(type identifier: String) -> HealthCategory {
        if let category = catalog[identifier] ?? elements[identifier] { return category }
        return inferred(identifier) ?? .other
    }

    /// The category an identifier's family or words suggest, nil when nothing does.
    public static func inferred(_ identifier: String) -> HealthCategory? {
        for (prefix, category) in families where identifier.hasPrefix(prefix) { return category }
        let lowered = identifier.lowercased()
        let tokens = Set(words(of: identifier))
        for (category, stems, whole) in keywords where stems.contains(where: lowered.contains) || !tokens.isDisjoint(with: whole) {
            return category
        }
        return nil
    }

    /// The words of a name, lowercased: split at anything but letters and digits and where a
    /// lowercase letter meets an uppercase one (`restingBpm` → resting, bpm).
    static func words(of name: String) -> [String] {
        var result: [String] = [], word = ""
        var previousLower = false
        for scalar in name.unicodeScalars {
            let isLetterOrDigit = scalar.properties.isAlphabetic || scalar.properties.numericType != nil
            let isUpper = scalar.properties.isUppercase
            if !isLetterOrDigit || (isUpper && previousLower) {
                if !word.isEmpty { result.append(word.lowercased()) }
                word = ""
            }
            if isLetterOrDigit { word.unicodeScalars.append(scalar) }
            previousLower = scalar.properties.isLowercase
        }
        if !word.isEmpty { result.append(word.lowercased()) }
        return result
    }

    private static let catalog: [String: HealthCategory] =
        Dictionary(HealthKitCatalog.entries.map { ($0.identifier, $0.category) }, uniquingKeysWith: { first, _ in first })

    /// Export elements kept as events of their own (docs/health-model.md, "Events").
    private static let elements: [String: HealthCategory] = [
        "Me": .profile, "Workout": .workouts, "WorkoutEvent": .workouts, "WorkoutStatistics": .workouts,
        "WorkoutRoute": .location, "HKWorkoutRouteTypeIdentifier": .location, "ActivitySummary": .activity, "ClinicalRecord": .clinical,
        "VisionPrescription": .clinical, "Audiogram": .other, "Electrocardiogram": .heart,
    ]

    private static let families: [(String, HealthCategory)] = [
        ("HKClinicalTypeIdentifier", .clinical), ("HKCharacteristicTypeIdentifier", .profile),
        ("_HKCharacteristicTypeIdentifier", .profile), ("HKWorkoutActivityType", .workouts),
        ("HKQuantityTypeIdentifierDietary", .nutrition), ("HKMedication", .clinical), ("HKDocumentTypeIdentifier", .clinical),
    ]

    /// Checked in this order: the stricter readings first. Stems are found anywhere in the name;
    /// short words only as a whole word of it (`nap`, not the one in `snapshot`).
    private static let keywords: [(HealthCategory, stems: [String], words: Set<String>)] = [
        (.reproductive, ["menstru", "pregnan", "ovulat", "lactat", "contracept", "cervical", "sexual", "bleeding",
                         "menopaus", "fertil", "progesterone", "period", "bbt", "abortion", "miscarr", "embryo", "ovari", "ovary",
                         "uterus", "uterine", "vagina", "erectile", "libido", "conceiv", "conception", "gestation", "postpartum",
                         "intercourse", "condom", "spotting", "estrogen", "oestrogen", "luteiniz", "follicle", "birthcontrol"],
         ["ivf", "iui", "lmp", "iud", "pms", "hcg"]),
        (.heart, ["heart", "cardi", "ecg", "ekg", "electrocardio", "pulse", "fibrillation", "arrhythm", "palpitation", "hypertension",
                  "afib", "tachycard", "bradycard"],
         ["bpm", "hr", "hrv", "rhr"]),
        (.sleep, ["sleep", "apnea", "apnoea", "snor", "insomnia", "bedtime", "slumber", "asleep", "wakeup"],
         ["nap", "naps", "napping", "rem", "doze", "dozed"]),
        (.mindfulness, ["mindful", "stateofmind", "mood"], []),
        (.nutrition, ["dietary"], []),
    ]
}

/// Helpers for HealthKit identifiers.
public enum HealthTypes {
    private static let prefixes = ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier",
                                   "HKDataTypeIdentifier", "HKCharacteristicTypeIdentifier", "HKClinicalTypeIdentifier",
                                   "HKDataType", "HKScoredAssessmentTypeIdentifier"]

    /// `HKQuantityTypeIdentifierStepCount` → `StepCount`.
    public static func shortName(_ identifier: String) -> String {
        for prefix in prefixes where identifier.hasPrefix(prefix) { return String(identifier.dropFirst(prefix.count)) }
        return identifier
    }
}
