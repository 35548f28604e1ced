import HealthModel

/// The JSON Health Auto Export posts: `{"data":{"metrics":[…],"workouts":[…]}}`. Fields are read
/// leniently so that one bad point is rejected alone.
struct AutoExport: Decodable {
    var data: Body

    struct Body: Decodable {
        var metrics: [Metric]?
        var workouts: [WorkoutEntry]?
    }

    struct Metric: Decodable {
        var name: String
        var units: String?
        var data: [Point]
    }

    /// One point: `qty`, or `Avg` (with `Min` and `Max`) for averaged metrics such as heart rate.
    struct Point: Decodable {
        var date: String?
        var qty: CompanionJSONImporter.LenientNumber?
        var Avg: CompanionJSONImporter.LenientNumber?
        var source: String?
    }

    struct Quantity: Decodable {
        var qty: CompanionJSONImporter.LenientNumber?
        var units: String?
    }

    struct WorkoutEntry: Decodable {
        var name: String?
        var start: String?
        var end: String?
        /// Seconds.
        var duration: CompanionJSONImporter.LenientNumber?
        var activeEnergyBurned: Quantity?
        var distance: Quantity?
    }

    /// Health Auto Export's metric names that are not a HealthKit type's own words.
    static let metricAliases: [String: String] = [
        "active_energy": "HKQuantityTypeIdentifierActiveEnergyBurned",
        "basal_energy_burned": "HKQuantityTypeIdentifierBasalEnergyBurned",
        "walking_running_distance": "HKQuantityTypeIdentifierDistanceWalkingRunning",
        "cycling_distance": "HKQuantityTypeIdentifierDistanceCycling",
        "apple_exercise_time": "HKQuantityTypeIdentifierAppleExerciseTime",
        "apple_stand_time": "HKQuantityTypeIdentifierAppleStandTime",
        "weight_body_mass": "HKQuantityTypeIdentifierBodyMass",
        "blood_oxygen_saturation": "HKQuantityTypeIdentifierOxygenSaturation",
        "heart_rate_variability": "HKQuantityTypeIdentifierHeartRateVariabilitySDNN",
        "walking_heart_rate_average": "HKQuantityTypeIdentifierWalkingHeartRateAverage",
        "dietary_water": "HKQuantityTypeIdentifierDietaryWater",
        "dietary_energy": "HKQuantityTypeIdentifierDietaryEnergyConsumed",
        "vo2_max": "HKQuantityTypeIdentifierVO2Max",
    ]

    /// Unit spellings of Health Auto Export that differ from HealthKit's.
    static let unitAliases: [String: String] = ["kj": "kJ"]

    /// The HealthKit activity type a workout's display name stands for.
    static func activityType(_ name: String) -> String {
        let lower = name.lowercased()
        let table: [(String, String)] = [
            ("run", "Running"), ("walk", "Walking"), ("hik", "Hiking"), ("cycl", "Cycling"), ("bik", "Cycling"),
            ("swim", "Swimming"), ("yoga", "Yoga"), ("hiit", "HighIntensityIntervalTraining"), ("row", "Rowing"),
            ("strength", "TraditionalStrengthTraining"), ("elliptical", "Elliptical"), ("dance", "Dance"),
        ]
        let match = table.first { lower.contains($0.0) }?.1 ?? "Other"
        return "HKWorkoutActivityType" + match
    }
}
