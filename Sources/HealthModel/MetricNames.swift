/// Short metric names (`steps`, `active-energy`) for HealthKit types, with their canonical unit:
/// what `summary METRIC`, the CSV importer and the companion JSON use. A HealthKit identifier is
/// accepted wherever a short name is.
public enum MetricNames {
    public struct Metric: Equatable, Sendable {
        public var identifier: String
        public var unit: String
    }

    public static let table: [String: Metric] = [
        "steps": .init(identifier: "HKQuantityTypeIdentifierStepCount", unit: "count"),
        "distance": .init(identifier: "HKQuantityTypeIdentifierDistanceWalkingRunning", unit: "m"),
        "cycling-distance": .init(identifier: "HKQuantityTypeIdentifierDistanceCycling", unit: "m"),
        "active-energy": .init(identifier: "HKQuantityTypeIdentifierActiveEnergyBurned", unit: "kcal"),
        "basal-energy": .init(identifier: "HKQuantityTypeIdentifierBasalEnergyBurned", unit: "kcal"),
        "exercise-time": .init(identifier: "HKQuantityTypeIdentifierAppleExerciseTime", unit: "min"),
        "stand-time": .init(identifier: "HKQuantityTypeIdentifierAppleStandTime", unit: "min"),
        "flights": .init(identifier: "HKQuantityTypeIdentifierFlightsClimbed", unit: "count"),
        "heart-rate": .init(identifier: "HKQuantityTypeIdentifierHeartRate", unit: "count/min"),
        "resting-heart-rate": .init(identifier: "HKQuantityTypeIdentifierRestingHeartRate", unit: "count/min"),
        "walking-heart-rate": .init(identifier: "HKQuantityTypeIdentifierWalkingHeartRateAverage", unit: "count/min"),
        "hrv": .init(identifier: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", unit: "ms"),
        "body-mass": .init(identifier: "HKQuantityTypeIdentifierBodyMass", unit: "kg"),
        "body-fat": .init(identifier: "HKQuantityTypeIdentifierBodyFatPercentage", unit: "%"),
        "height": .init(identifier: "HKQuantityTypeIdentifierHeight", unit: "m"),
        "respiratory-rate": .init(identifier: "HKQuantityTypeIdentifierRespiratoryRate", unit: "count/min"),
        "oxygen-saturation": .init(identifier: "HKQuantityTypeIdentifierOxygenSaturation", unit: "%"),
        "vo2max": .init(identifier: "HKQuantityTypeIdentifierVO2Max", unit: "mL/min·kg"),
    ]

    /// The metric a name or HealthKit identifier stands for; nil when unknown.
    public static func metric(_ name: String) -> Metric? {
        if let m = table[name.lowercased()] { return m }
        return table.values.first { $0.identifier == name }
    }
}

extension MetricNames {
    /// The HealthKit identifier a name stands for: a metric name (`steps`), any type's short name
    /// (`blood-glucose`, as `types` prints them), an identifier, or a name as CSV and companion
    /// JSON write them (`heart_rate`, `StepCount`, `Sleep Analysis`); nil for none of these.
    public static func identifier(for name: String) -> String? {
        if let known = metric(name) { return known.identifier }
        if let identifier = ShortNames.identifier(for: name) { return identifier }
        if name.hasPrefix("HK"), name.count < 200 { return name }
        if case .known(let identifier, _) = TypeNames.resolve(name) { return identifier }
        return nil
    }
}
