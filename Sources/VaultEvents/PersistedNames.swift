import HealthModel

/// The names the log stores for enumerations (docs/event-encoding.md), spelled out here and
/// nowhere else. They are never taken from an enum's raw value or description, which belong to
/// the modules that declare them (`Ring` and `DeviceClass` are the read models'): renaming a case
/// there cannot make an existing vault undecodable. `PersistedNamesTests` pins every name.
package enum PersistedNames {
    package static func name(of ring: Ring) -> String {
        switch ring {
        case .move: "move"
        case .exercise: "exercise"
        case .stand: "stand"
        }
    }

    package static func ring(named name: String) -> Ring? { Ring.allCases.first { self.name(of: $0) == name } }

    package static func name(of deviceClass: DeviceClass) -> String {
        switch deviceClass {
        case .watch: "watch"
        case .phone: "phone"
        case .other: "other"
        }
    }

    package static func deviceClass(named name: String) -> DeviceClass? { DeviceClass.allCases.first { self.name(of: $0) == name } }

    package static func name(of category: HealthCategory) -> String {
        switch category {
        case .activity: "activity"
        case .heart: "heart"
        case .sleep: "sleep"
        case .body: "body"
        case .vitals: "vitals"
        case .workouts: "workouts"
        case .location: "location"
        case .nutrition: "nutrition"
        case .mindfulness: "mindfulness"
        case .reproductive: "reproductive"
        case .clinical: "clinical"
        case .profile: "profile"
        case .other: "other"
        case .trackers: "trackers"
        }
    }

    package static func category(named name: String) -> HealthCategory? { HealthCategory.allCases.first { self.name(of: $0) == name } }

    package static func name(of granularity: Granularity) -> String {
        switch granularity {
        case .raw: "raw"
        case .hourly: "hourly"
        case .daily: "daily"
        }
    }

    package static func granularity(named name: String) -> Granularity? { Granularity.allCases.first { self.name(of: $0) == name } }

    package static func name(of reason: IdentityRecord.Reason) -> String {
        switch reason {
        case .created: "created"
        case .adopted: "adopted"
        case .rotated: "rotated"
        }
    }

    package static func identityReason(named name: String) -> IdentityRecord.Reason? {
        [IdentityRecord.Reason.created, .adopted, .rotated].first { self.name(of: $0) == name }
    }
}
