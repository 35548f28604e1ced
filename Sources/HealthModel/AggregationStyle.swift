/// Whether a quantity type's values add up over time (HealthKit's cumulative aggregation style:
/// steps, distances, energy, minutes, nutrients) or are averaged (heart rate, body mass).
public enum AggregationStyle: Sendable {
    case cumulative, discrete

    /// The style of a HealthKit quantity type identifier.
    public static func of(type identifier: String) -> AggregationStyle {
        let short = HealthTypes.shortName(identifier)
        if cumulativeTypes.contains(short) || short.hasPrefix("Dietary") || short.hasPrefix("Distance") { return .cumulative }
        return .discrete
    }

    private static let cumulativeTypes: Set<String> = [
        "StepCount", "FlightsClimbed", "ActiveEnergyBurned", "BasalEnergyBurned", "AppleExerciseTime",
        "AppleStandTime", "AppleMoveTime", "PushCount", "SwimmingStrokeCount", "NikeFuel", "TimeInDaylight",
        "NumberOfTimesFallen", "InhalerUsage", "InsulinDelivery", "NumberOfAlcoholicBeverages", "UVExposure",
    ]
}
