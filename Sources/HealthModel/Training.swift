/// The kind of effort an exercise is (SoFit's "motion"): building strength, sustaining effort, or
/// moving joints through their range. The raw values are persisted in the log.
public enum Motion: String, CaseIterable, Sendable, Comparable {
    case strength, endurance, mobility

    public static func < (a: Motion, b: Motion) -> Bool { a.rawValue < b.rawValue }
}

/// A part of the body an exercise works. The raw values are persisted in the log and are the
/// keys of `stats`' shares.
public enum BodyPart: String, CaseIterable, Sendable, Comparable {
    case chest, back, shoulders, arms, core, legs
    /// The whole body at once (burpees, swimming): one part of its own, not all six.
    case fullBody = "full-body"

    public static func < (a: BodyPart, b: BodyPart) -> Bool { a.rawValue < b.rawValue }

    /// The parts in `text` (`chest,arms`), or the first word that is none.
    public static func parse(list text: String) -> Result<[BodyPart], UnknownWord> {
        var parts: [BodyPart] = []
        for word in text.split(separator: ",") {
            let trimmed = String(word.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()).lowercased()
            let part = BodyPart(rawValue: trimmed) ?? (trimmed == "fullbody" || trimmed == "full body" ? .fullBody : nil)
            guard let part else { return .failure(UnknownWord(word: trimmed)) }
            if !parts.contains(part) { parts.append(part) }
        }
        return .success(parts)
    }

    /// A word that names no body part.
    public struct UnknownWord: Error, Equatable {
        public var word: String
    }
}

/// What a kind of workout trains: its motion and, where the activity says it, the body parts.
public struct TrainingProfile: Equatable, Sendable {
    public var motion: Motion
    public var bodyParts: [BodyPart]

    public init(_ motion: Motion, _ bodyParts: [BodyPart] = []) {
        self.motion = motion
        self.bodyParts = bodyParts
    }
}

/// HealthKit's workout activity types (`HKWorkoutActivityType`, every case since iOS 8, the
/// deprecated ones too, since old exports hold them), each with what it trains. The importers
/// write workouts under these names: Apple exports as they stand, Health Auto Export and the
/// companion apps through their own tables of names.
public enum WorkoutActivityTypes {
    /// The prefix of every activity type's identifier.
    public static let prefix = "HKWorkoutActivityType"

    /// What the activity type trains; nil for one this table does not know (a type HealthKit
    /// added later, `Other`), which `stats` shows as `unknown`.
    public static func profile(of identifier: String) -> TrainingProfile? {
        guard identifier.hasPrefix(prefix) else { return nil }
        return profiles[String(identifier.dropFirst(prefix.count))]
    }

    /// Every activity type this table classifies, by the name after the prefix.
    public static var names: [String] { profiles.keys.sorted() }

    private static let profiles: [String: TrainingProfile] = {
        let strength: [(String, [BodyPart])] = [
            ("TraditionalStrengthTraining", []), ("FunctionalStrengthTraining", []), ("CoreTraining", [.core]),
            ("Climbing", [.back, .arms]), ("Gymnastics", [.fullBody]), ("Wrestling", [.fullBody]), ("Barre", [.legs, .core]),
            ("DanceInspiredTraining", [.legs, .core]), ("Archery", [.arms, .shoulders, .back]), ("Bowling", [.arms]),
            ("TrackAndField", [.fullBody]),
        ]
        let endurance: [(String, [BodyPart])] = [
            ("Running", [.legs]), ("Walking", [.legs]), ("Hiking", [.legs]), ("Cycling", [.legs]), ("HandCycling", [.arms]),
            ("Swimming", [.fullBody]), ("Rowing", [.back, .arms, .legs]), ("Elliptical", [.legs, .arms]),
            ("StairClimbing", [.legs]), ("Stairs", [.legs]), ("StepTraining", [.legs]), ("JumpRope", [.legs]),
            ("HighIntensityIntervalTraining", [.fullBody]), ("MixedCardio", [.fullBody]), ("MixedMetabolicCardioTraining", [.fullBody]),
            ("CrossTraining", [.fullBody]), ("CrossCountrySkiing", [.fullBody]), ("DownhillSkiing", [.legs]), ("Snowboarding", [.legs]),
            ("SnowSports", [.legs]), ("SkatingSports", [.legs]), ("PaddleSports", [.arms, .back, .shoulders]),
            ("SurfingSports", [.fullBody]), ("WaterFitness", [.fullBody]), ("WaterPolo", [.fullBody]), ("WaterSports", [.fullBody]),
            ("UnderwaterDiving", [.legs]), ("SwimBikeRun", [.fullBody]), ("Transition", [.legs]),
            ("WheelchairWalkPace", [.arms]), ("WheelchairRunPace", [.arms]),
            ("Boxing", [.arms, .shoulders]), ("Kickboxing", [.fullBody]), ("MartialArts", [.fullBody]), ("Fencing", [.legs, .arms]),
            ("Dance", [.fullBody]), ("CardioDance", [.fullBody]), ("SocialDance", [.fullBody]),
            ("AmericanFootball", [.fullBody]), ("AustralianFootball", [.fullBody]), ("Rugby", [.fullBody]), ("Soccer", [.legs]),
            ("Basketball", [.fullBody]), ("Handball", [.fullBody]), ("Volleyball", [.fullBody]), ("Hockey", [.fullBody]),
            ("Lacrosse", [.fullBody]), ("Baseball", [.fullBody]), ("Softball", [.fullBody]), ("Cricket", [.fullBody]),
            ("Tennis", [.arms, .legs]), ("Badminton", [.arms, .legs]), ("Squash", [.arms, .legs]), ("Racquetball", [.arms, .legs]),
            ("TableTennis", [.arms]), ("Pickleball", [.arms, .legs]), ("DiscSports", [.fullBody]), ("Golf", [.legs]),
            ("Curling", [.legs]), ("EquestrianSports", [.legs, .core]), ("Sailing", [.arms]), ("Fishing", []), ("Hunting", [.legs]),
            ("Play", [.fullBody]), ("FitnessGaming", [.fullBody]),
        ]
        let mobility: [(String, [BodyPart])] = [
            ("Yoga", [.fullBody]), ("Pilates", [.core]), ("Flexibility", [.fullBody]), ("TaiChi", [.fullBody]),
            ("MindAndBody", []), ("PreparationAndRecovery", []), ("Cooldown", []),
        ]
        var table: [String: TrainingProfile] = [:]
        for (motion, list) in [(Motion.strength, strength), (.endurance, endurance), (.mobility, mobility)] {
            for (name, parts) in list {
                precondition(table[name] == nil, "\(name) classified twice")
                table[name] = TrainingProfile(motion, parts)
            }
        }
        return table
    }()
}
