/// The three activity rings.
public enum Ring: String, CaseIterable, Sendable, Codable {
    case move, exercise, stand

    /// The metric that fills the ring (stand counts stand-hour records instead).
    public var metric: String? {
        switch self {
        case .move: RingMetrics.activeEnergy
        case .exercise: RingMetrics.exerciseTime
        case .stand: nil
        }
    }

    /// The canonical unit of the ring's metric.
    public var unit: String {
        switch self {
        case .move: "kcal"
        case .exercise: "min"
        case .stand: "h"
        }
    }

    /// The goal when nothing else says: Apple's defaults for a new Watch.
    public var defaultGoal: Double {
        switch self {
        case .move: 400
        case .exercise: 30
        case .stand: 12
        }
    }
}

/// The HealthKit types the rings are made of.
public enum RingMetrics {
    public static let activeEnergy = "HKQuantityTypeIdentifierActiveEnergyBurned"
    public static let exerciseTime = "HKQuantityTypeIdentifierAppleExerciseTime"
}
