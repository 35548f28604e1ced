import Foundation
import HealthModel
import Projections
import VaultEvents

extension Vault {
    /// Defines an exercise (or defines one again, the seeded ones too): sets logged from now on
    /// count under these body parts and this motion.
    @discardableResult
    public func addExercise(name: String, bodyParts: [BodyPart], motion: Motion, now: Date = Date()) throws -> Exercise {
        if let problem = Self.displayNameProblem(name) { throw VaultError.invalidExercise(reason: "an exercise's name: " + problem) }
        guard !bodyParts.isEmpty else { throw VaultError.invalidExercise(reason: "give at least one body part (--body-part P[,P...])") }
        // One spelling per exercise: a name that differs only in case takes the earlier one's.
        let known = try exercises().first { $0.name.lowercased() == name.lowercased() }
        let exercise = Exercise(name: known?.name ?? name, bodyParts: bodyParts, motion: motion)
        try append([.exerciseDefined(ExerciseDefinition(at: now, exercise: exercise))])
        return exercise
    }

    /// Every exercise: the seeded catalogue and the person's own, each by its latest definition,
    /// sorted by name.
    public func exercises() throws -> [Exercise] {
        var byName: [String: Exercise] = [:]
        for exercise in ExerciseCatalog.seeded { byName[exercise.name.lowercased()] = exercise }
        try forEachAuditEvent { _, event in
            if case .exerciseDefined(let d) = event { byName[d.exercise.name.lowercased()] = d.exercise }
        }
        return byName.values.sorted { ($0.name.lowercased(), $0.name) < ($1.name.lowercased(), $1.name) }
    }

    /// Logs a set of the exercise named `name` (case ignored) at `at`: `repetitions` done, over
    /// `seconds` if given. Returns the entry, with the exercise as defined now.
    @discardableResult
    public func practice(name: String, repetitions: Int, seconds: Int?, at: HealthTimestamp) throws -> PracticeEntry {
        guard let exercise = try exercises().first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw VaultError.unknownExercise(name: name)
        }
        guard (0...100_000).contains(repetitions) else { throw VaultError.invalidExercise(reason: "--reps takes a number from 0 to 100000") }
        if let seconds { guard (1...86_400).contains(seconds) else { throw VaultError.invalidExercise(reason: "--duration takes minutes above 0, at most a day") } }
        guard repetitions > 0 || seconds != nil else { throw VaultError.invalidExercise(reason: "a set needs repetitions or a duration") }
        let entry = PracticeEntry(exercise: exercise, repetitions: repetitions, seconds: seconds, at: at)
        if erasedLabels().contains(DataLabel(category: .workouts, month: LocalMonth(entry.day))) {
            throw VaultError.invalidExercise(reason: "workouts data of \(LocalMonth(entry.day)) was erased; nothing is logged there")
        }
        try append([.practiceLogged(entry)])
        return entry
    }

    /// Sets and workouts per period with their shares per body part and motion (`stats`).
    public func trainingStats(by period: SummaryPeriod, from: LocalDay? = nil, to: LocalDay? = nil,
                              weight: TrainingShareWeight = .count) throws -> [TrainingPeriod] {
        try withReadModels { try $0.trainingStats(by: period, from: from, to: to, weight: weight) }
    }
}
