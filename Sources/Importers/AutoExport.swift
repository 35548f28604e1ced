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

    /// One point: `qty`, or `Avg` (with `Min` and `Max`) for averaged metrics such as heart rate;
    /// `systolic` and `diastolic` for blood pressure; for sleep, either one stage (`startDate`,
    /// `endDate`, `value` "Core", `qty` hours) or a night's totals (`sleepStart`, `sleepEnd`,
    /// `inBedStart`, `inBedEnd`, hours `asleep`, `core`, `deep`, `rem`, `awake`, `inBed`).
    struct Point: Decodable {
        var date: String?
        var qty: CompanionJSONImporter.LenientNumber?
        var Avg: CompanionJSONImporter.LenientNumber?
        var Min: CompanionJSONImporter.LenientNumber?
        var Max: CompanionJSONImporter.LenientNumber?
        var systolic: CompanionJSONImporter.LenientNumber?
        var diastolic: CompanionJSONImporter.LenientNumber?
        var source: String?
        var startDate: String?
        var endDate: String?
        var value: String?
        var sleepStart: String?
        var sleepEnd: String?
        var inBedStart: String?
        var inBedEnd: String?
        /// Hours asleep (`asleep`, or `totalSleep` in the app's newer totals).
        var asleep: CompanionJSONImporter.LenientNumber?
        var core: CompanionJSONImporter.LenientNumber?
        var deep: CompanionJSONImporter.LenientNumber?
        var rem: CompanionJSONImporter.LenientNumber?
        var awake: CompanionJSONImporter.LenientNumber?
        var inBed: CompanionJSONImporter.LenientNumber?
        /// The devices that recorded the night's sleep and its time in bed (older totals).
        var sleepSource: String?
        var inBedSource: String?

        private enum CodingKeys: String, CodingKey {
            case date, qty, Avg, Min, Max, systolic, diastolic, source, startDate, endDate, value
            case sleepStart, sleepEnd, inBedStart, inBedEnd, asleep, totalSleep, core, deep, rem, awake, inBed, sleepSource, inBedSource
        }

        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func text(_ key: CodingKeys) -> String? { try? c.decodeIfPresent(String.self, forKey: key) }
            func number(_ key: CodingKeys) -> CompanionJSONImporter.LenientNumber? {
                try? c.decodeIfPresent(CompanionJSONImporter.LenientNumber.self, forKey: key)
            }
            date = text(.date); qty = number(.qty); Avg = number(.Avg); Min = number(.Min); Max = number(.Max)
            systolic = number(.systolic); diastolic = number(.diastolic); source = text(.source)
            startDate = text(.startDate); endDate = text(.endDate); value = text(.value)
            sleepStart = text(.sleepStart); sleepEnd = text(.sleepEnd); inBedStart = text(.inBedStart); inBedEnd = text(.inBedEnd)
            asleep = number(.asleep) ?? number(.totalSleep); core = number(.core); deep = number(.deep); rem = number(.rem); awake = number(.awake); inBed = number(.inBed)
            sleepSource = text(.sleepSource); inBedSource = text(.inBedSource)
        }
    }

    /// A point of a workout's route (v2): `lat`/`latitude`, `lon`/`longitude`, `timestamp`.
    struct RoutePoint: Decodable {
        var latitude: Double?
        var longitude: Double?
        var altitude: Double?
        var speed: Double?
        var course: Double?
        var horizontalAccuracy: Double?
        var verticalAccuracy: Double?
        var timestamp: String?

        private enum CodingKeys: String, CodingKey {
            case lat, lon, latitude, longitude, altitude, speed, course, horizontalAccuracy, verticalAccuracy, timestamp, date
        }

        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func number(_ key: CodingKeys) -> Double? { (try? c.decodeIfPresent(CompanionJSONImporter.LenientNumber.self, forKey: key))??.number }
            latitude = number(.lat) ?? number(.latitude)
            longitude = number(.lon) ?? number(.longitude)
            altitude = number(.altitude); speed = number(.speed); course = number(.course)
            horizontalAccuracy = number(.horizontalAccuracy); verticalAccuracy = number(.verticalAccuracy)
            timestamp = (try? c.decodeIfPresent(String.self, forKey: .timestamp)) ?? (try? c.decodeIfPresent(String.self, forKey: .date)) ?? nil
        }
    }

    /// The sleep stage a per-stage point's `value` names, as HealthKit's category value.
    static func sleepValue(_ stage: String) -> String? {
        switch stage.lowercased().filter({ $0.isLetter }) {
        case "core", "asleepcore", "light": "HKCategoryValueSleepAnalysisAsleepCore"
        case "deep", "asleepdeep": "HKCategoryValueSleepAnalysisAsleepDeep"
        case "rem", "asleeprem": "HKCategoryValueSleepAnalysisAsleepREM"
        case "awake": "HKCategoryValueSleepAnalysisAwake"
        case "inbed": "HKCategoryValueSleepAnalysisInBed"
        case "asleep", "asleepunspecified", "unspecified": "HKCategoryValueSleepAnalysisAsleepUnspecified"
        default: nil
        }
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
        /// The energy as the app's first workout format names it.
        var activeEnergy: Quantity?
        var distance: Quantity?
        var route: [RoutePoint]?
        /// Heart rate during the workout (`qty` bpm at `date`), in the app's first workout format.
        var heartRateData: [Point]?
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
