/// FIT's profile names for what the importer reads: sports and sub-sports as HealthKit's workout
/// activity types, and makers' ids (FIT SDK profile, `Profile.xlsx`: types `sport`, `sub_sport`,
/// `manufacturer`).
enum FITSports {
    /// The HealthKit activity type of a FIT sport and sub-sport; `Other` for one with none.
    static func activityType(sport: Int64?, subSport: Int64?) -> String {
        let prefix = "HKWorkoutActivityType"
        if let subSport, let type = bySubSport[subSport], sport == 4 || sport == 10 || sport == 2 && subSport == 12 { return prefix + type }
        return prefix + (sport.flatMap { bySport[$0] } ?? "Other")
    }

    static let bySport: [Int64: String] = [
        1: "Running", 2: "Cycling", 3: "Transition", 5: "Swimming", 6: "Basketball", 7: "Soccer", 8: "Tennis", 9: "AmericanFootball",
        11: "Walking", 12: "CrossCountrySkiing", 13: "DownhillSkiing", 14: "Snowboarding", 15: "Rowing", 16: "Hiking", 17: "Hiking",
        18: "SwimBikeRun", 19: "PaddleSports", 21: "Cycling", 25: "Golf", 27: "EquestrianSports", 28: "Hunting", 29: "Fishing",
        30: "SkatingSports", 31: "Climbing", 32: "Sailing", 33: "SkatingSports", 35: "SnowSports", 37: "PaddleSports",
        38: "SurfingSports", 39: "WaterSports", 40: "WaterSports", 41: "PaddleSports", 42: "PaddleSports", 43: "SurfingSports",
        44: "SurfingSports", 47: "Boxing", 48: "StairClimbing", 62: "HighIntensityIntervalTraining",
    ]

    /// Sub-sports of fitness equipment (4) and training (10), and hand cycling.
    static let bySubSport: [Int64: String] = [
        1: "Running", 5: "Cycling", 6: "Cycling", 12: "HandCycling", 14: "Rowing", 15: "Elliptical", 16: "StairClimbing",
        19: "Flexibility", 20: "TraditionalStrengthTraining", 26: "MixedCardio", 27: "Walking", 43: "Yoga", 44: "Pilates",
        45: "Running",
    ]

    static let manufacturers: [Int64: String] = [
        1: "Garmin", 13: "Dynastream OEM", 15: "Dynastream", 23: "Suunto", 32: "Wahoo Fitness", 89: "Tacx", 255: "Development",
        260: "Zwift", 294: "COROS",
    ]
}
