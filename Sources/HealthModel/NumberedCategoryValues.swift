/// iOS 8 wrote category samples with `unit=""` and the enumeration's number (`value="1"`);
/// later exports write the value's name. One table says which number is which name, for the
/// importer reading such a record and for the event decoder reading a sample that builds before
/// commit 3850060 (2026-11-24 18:09 UTC) stored as a quantity with an empty unit
/// (docs/event-encoding.md, "Identity").
public enum NumberedCategoryValues {
    /// Whether `type` is a category type (whose values iOS 8 numbered).
    public static func isCategoryType(_ type: String) -> Bool {
        type.hasPrefix("HKCategoryTypeIdentifier")
    }

    /// The value HealthKit names number `number` of category type `type` (sleep: 0 in bed,
    /// 1 asleep, 2 awake; stand hours: 0 stood, 1 idle); other numbers as written.
    public static func name(type: String, number: String) -> String {
        switch (type, number) {
        case ("HKCategoryTypeIdentifierSleepAnalysis", "0"): "HKCategoryValueSleepAnalysisInBed"
        case ("HKCategoryTypeIdentifierSleepAnalysis", "1"): "HKCategoryValueSleepAnalysisAsleep"
        case ("HKCategoryTypeIdentifierSleepAnalysis", "2"): "HKCategoryValueSleepAnalysisAwake"
        case ("HKCategoryTypeIdentifierAppleStandHour", "0"): "HKCategoryValueAppleStandHourStood"
        case ("HKCategoryTypeIdentifierAppleStandHour", "1"): "HKCategoryValueAppleStandHourIdle"
        default: number
        }
    }
}
