/// What a read model learns from one event, in the projections' own terms: the vault maps its
/// events into these, and tests build them directly.
public enum ProjectionInput: Sendable {
    /// A sample of a metric whose values add up over time (steps, distance, energy, minutes).
    case cumulative(CumulativeSample)
    /// A sample of a metric that is averaged (heart rate, body mass).
    case discrete(DiscreteSample)
    /// An Apple stand-hour record: whether the person stood during the hour starting at `start`.
    case standHour(start: Int64, utcOffset: Int32, stood: Bool)
    /// Apple's own ring values and goals for one day (`ActivitySummary`).
    case appleRings(AppleRings)
    /// A ring goal set by the person, in force from a day on.
    case goalSet(ring: Ring, value: Double, from: LocalDay)
    /// The person's source order: these sources first, in this order; the rest by default rank.
    case sourceOrder([SourceKey])
}

/// How a source ranks by default: by its device's model, never by the name the user gave it.
public enum DeviceClass: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case watch = 0
    case phone = 1
    case other = 2

    /// The class of a device model (`Watch`, `iPhone`, `Watch6,7`); `nil` means no device.
    public init(model: String?) {
        guard let model else { self = .other; return }
        if model.lowercased().contains("watch") { self = .watch }
        else if model.hasPrefix("iPhone") { self = .phone }
        else { self = .other }
    }

    public init?(name: String) {
        guard let c = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = c
    }

    public var description: String {
        switch self {
        case .watch: "watch"
        case .phone: "phone"
        case .other: "other"
        }
    }

    public static func < (a: DeviceClass, b: DeviceClass) -> Bool { a.rawValue < b.rawValue }
}

/// A source as the priority list knows it: the app or device name with its device class.
public struct SourceKey: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var deviceClass: DeviceClass

    public init(name: String, deviceClass: DeviceClass) {
        self.name = name
        self.deviceClass = deviceClass
    }

    public var description: String { "\(name) (\(deviceClass))" }
}

/// One cumulative sample over [start, end) (seconds since 1970, UTC), with the UTC offset it
/// was recorded in and its value in the metric's canonical unit.
public struct CumulativeSample: Sendable {
    public var metric: String
    public var unit: String
    public var source: SourceKey
    public var start: Int64
    public var end: Int64
    public var utcOffset: Int32
    public var value: Double

    public init(metric: String, unit: String, source: SourceKey, start: Int64, end: Int64, utcOffset: Int32, value: Double) {
        self.metric = metric
        self.unit = unit
        self.source = source
        self.start = start
        self.end = end
        self.utcOffset = utcOffset
        self.value = value
    }
}

/// One discrete sample: a reading at `start` in the metric's canonical unit.
public struct DiscreteSample: Sendable {
    public var metric: String
    public var unit: String
    public var start: Int64
    public var utcOffset: Int32
    public var value: Double

    public init(metric: String, unit: String, start: Int64, utcOffset: Int32, value: Double) {
        self.metric = metric
        self.unit = unit
        self.start = start
        self.utcOffset = utcOffset
        self.value = value
    }
}

/// Apple's ring values and goals of one day, kept to compare with the computed rings.
public struct AppleRings: Sendable, Equatable {
    public var day: LocalDay
    public var move: Double?
    public var moveGoal: Double?
    public var exercise: Double?
    public var exerciseGoal: Double?
    public var stand: Double?
    public var standGoal: Double?

    public init(day: LocalDay, move: Double? = nil, moveGoal: Double? = nil, exercise: Double? = nil,
                exerciseGoal: Double? = nil, stand: Double? = nil, standGoal: Double? = nil) {
        self.day = day
        self.move = move
        self.moveGoal = moveGoal
        self.exercise = exercise
        self.exerciseGoal = exerciseGoal
        self.stand = stand
        self.standGoal = standGoal
    }
}

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
