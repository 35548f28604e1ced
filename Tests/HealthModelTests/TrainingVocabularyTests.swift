import Testing
@testable import HealthModel

/// What a workout trains (issue 41): every activity type HealthKit has had since iOS 8 is
/// classified. The list below is Apple's `HKWorkoutActivityType`, written out here from its
/// documentation, not taken from the table under test.
@Suite struct TrainingVocabularyTests {
    static let appleActivityTypes = [
        "AmericanFootball", "Archery", "AustralianFootball", "Badminton", "Baseball", "Basketball", "Bowling", "Boxing", "Climbing",
        "Cricket", "CrossTraining", "Curling", "Cycling", "Dance", "DanceInspiredTraining", "Elliptical", "EquestrianSports", "Fencing",
        "Fishing", "FunctionalStrengthTraining", "Golf", "Gymnastics", "Handball", "Hiking", "Hockey", "Hunting", "Lacrosse",
        "MartialArts", "MindAndBody", "MixedMetabolicCardioTraining", "PaddleSports", "Play", "PreparationAndRecovery", "Racquetball",
        "Rowing", "Rugby", "Running", "Sailing", "SkatingSports", "SnowSports", "Soccer", "Softball", "Squash", "StairClimbing",
        "SurfingSports", "Swimming", "TableTennis", "Tennis", "TrackAndField", "TraditionalStrengthTraining", "Volleyball", "Walking",
        "WaterFitness", "WaterPolo", "WaterSports", "Wrestling", "Yoga", "Barre", "CoreTraining", "CrossCountrySkiing",
        "DownhillSkiing", "Flexibility", "HighIntensityIntervalTraining", "JumpRope", "Kickboxing", "Pilates", "Snowboarding",
        "Stairs", "StepTraining", "WheelchairWalkPace", "WheelchairRunPace", "TaiChi", "MixedCardio", "HandCycling", "DiscSports",
        "FitnessGaming", "CardioDance", "SocialDance", "Pickleball", "Cooldown", "SwimBikeRun", "Transition", "UnderwaterDiving",
    ]

    @Test func everyHealthKitActivityTypeIsClassifiedAndNothingElse() {
        #expect(Self.appleActivityTypes.count == 83)
        for name in Self.appleActivityTypes {
            #expect(WorkoutActivityTypes.profile(of: "HKWorkoutActivityType" + name) != nil, "\(name) is not classified")
        }
        // The table holds Apple's types and no invented one.
        #expect(Set(WorkoutActivityTypes.names) == Set(Self.appleActivityTypes))
        // `Other`, a type from a later iOS, and what is no activity type are unknown.
        for unknown in ["HKWorkoutActivityTypeOther", "HKWorkoutActivityTypeZorbing", "Running", "HKWorkoutActivityType"] {
            #expect(WorkoutActivityTypes.profile(of: unknown) == nil, "\(unknown)")
        }
    }

    @Test func theMotionsOfCommonKindsAreWhatSoFitShows() {
        let expected: [(String, Motion, [BodyPart])] = [
            ("Running", .endurance, [.legs]), ("Cycling", .endurance, [.legs]), ("Swimming", .endurance, [.fullBody]),
            ("TraditionalStrengthTraining", .strength, []), ("FunctionalStrengthTraining", .strength, []), ("CoreTraining", .strength, [.core]),
            ("Yoga", .mobility, [.fullBody]), ("Pilates", .mobility, [.core]), ("Flexibility", .mobility, [.fullBody]),
            ("HighIntensityIntervalTraining", .endurance, [.fullBody]), ("Rowing", .endurance, [.back, .arms, .legs]),
        ]
        for (name, motion, parts) in expected {
            #expect(WorkoutActivityTypes.profile(of: "HKWorkoutActivityType" + name) == TrainingProfile(motion, parts), "\(name)")
        }
    }

    @Test func bodyPartListsParseAndNameWhatIsUnknown() throws {
        #expect(try BodyPart.parse(list: "chest, Arms,chest").get() == [.chest, .arms])
        #expect(try BodyPart.parse(list: "full-body").get() == [.fullBody])
        #expect(throws: BodyPart.UnknownWord(word: "neck")) { try BodyPart.parse(list: "legs,neck").get() }
        // The seeded catalogue names each exercise once and every one works something.
        let names = ExerciseCatalog.seeded.map { $0.name.lowercased() }
        #expect(Set(names).count == names.count)
        #expect(ExerciseCatalog.seeded.allSatisfy { !$0.bodyParts.isEmpty })
    }
}
