import Foundation
import HealthModel

/// A tracker a person logs by hand (`vaultctl tracker add`): its levels and their values, the
/// levels that count as a success, when its day starts, and the HealthKit type it stands for, if
/// any. Defining a name again replaces the definition from then on; entries keep the day and
/// category they were given.
public struct TrackerDefinition: Hashable, Sendable {
    public var at: Date
    public var name: String
    /// Levels in the order given, each with its value.
    public var levels: [TrackerLevel]
    public var success: [String]
    /// Minutes after local midnight at which a tracker day starts (0 to 1439): an entry before
    /// it belongs to the day before.
    public var dayStartsMinutes: Int
    public var healthKitType: String?

    public init(at: Date, name: String, levels: [TrackerLevel], success: [String], dayStartsMinutes: Int, healthKitType: String?) {
        self.at = at
        self.name = name
        self.levels = levels
        self.success = success
        self.dayStartsMinutes = dayStartsMinutes
        self.healthKitType = healthKitType
    }

    /// The consent category its entries go under: the HealthKit type's, else `trackers`.
    public var category: HealthCategory { healthKitType.map { HealthCategory.of(type: $0) } ?? .trackers }

    /// The tracker day an instant belongs to, in the offset it was recorded with.
    public func day(of instant: HealthTimestamp) -> LocalDay {
        let shifted = instant.seconds + Int64(instant.utcOffset) - Int64(dayStartsMinutes) * 60
        return LocalDay(dayNumber: LocalDay.floorDivide(shifted, 86_400))
    }
}

/// One level of a tracker: its name and value (`easy` = 4).
public struct TrackerLevel: Hashable, Sendable {
    public var name: String
    public var value: DecimalValue

    public init(name: String, value: DecimalValue) {
        self.name = name
        self.value = value
    }
}

/// One entry (`vaultctl track`): the level logged, its value then, when, and the tracker day and
/// category it was filed under (so a later definition does not move it).
public struct TrackerEntry: Hashable, Sendable {
    public var tracker: String
    public var level: String
    public var value: DecimalValue
    public var at: HealthTimestamp
    public var day: LocalDay
    public var category: HealthCategory

    public init(tracker: String, level: String, value: DecimalValue, at: HealthTimestamp, day: LocalDay, category: HealthCategory) {
        self.tracker = tracker
        self.level = level
        self.value = value
        self.at = at
        self.day = day
        self.category = category
    }
}
