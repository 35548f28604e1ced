import Foundation
import HealthModel

/// An exercise the person defined (`vaultctl exercise add`), or defined again: from then on its
/// sets count under these body parts and this motion; sets logged before keep theirs.
public struct ExerciseDefinition: Hashable, Sendable {
    public var at: Date
    public var exercise: Exercise

    public init(at: Date, exercise: Exercise) {
        self.at = at
        self.exercise = exercise
    }
}

/// One set (`vaultctl practice`): the exercise as it was defined then, the repetitions, how long
/// it took if said, and when. It belongs to the local day of `at` (in the offset it was logged
/// with) and to the `workouts` consent category.
public struct PracticeEntry: Hashable, Sendable {
    public var exercise: Exercise
    public var repetitions: Int
    /// Seconds, when the person gave a duration.
    public var seconds: Int?
    public var at: HealthTimestamp

    public init(exercise: Exercise, repetitions: Int, seconds: Int?, at: HealthTimestamp) {
        self.exercise = exercise
        self.repetitions = repetitions
        self.seconds = seconds
        self.at = at
    }

    /// The local day it was practised on.
    public var day: LocalDay { LocalDay(instant: at.seconds, utcOffset: at.utcOffset) }
}
