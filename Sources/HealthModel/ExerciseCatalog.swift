/// An exercise a person practises in sets: its name, the body parts it works and its motion.
public struct Exercise: Hashable, Sendable {
    public var name: String
    public var bodyParts: [BodyPart]
    public var motion: Motion

    public init(name: String, bodyParts: [BodyPart], motion: Motion) {
        self.name = name
        self.bodyParts = bodyParts
        self.motion = motion
    }
}

/// The exercises every vault starts with (`exercise list`); a person adds their own, or defines
/// one of these again, with `exercise add`.
public enum ExerciseCatalog {
    public static let seeded: [Exercise] = [
        Exercise(name: "push-ups", bodyParts: [.chest, .arms], motion: .strength),
        Exercise(name: "squats", bodyParts: [.legs], motion: .strength),
        Exercise(name: "plank", bodyParts: [.core], motion: .strength),
        Exercise(name: "pull-ups", bodyParts: [.back, .arms], motion: .strength),
        Exercise(name: "lunges", bodyParts: [.legs], motion: .strength),
        Exercise(name: "burpees", bodyParts: [.fullBody], motion: .endurance),
        Exercise(name: "sit-ups", bodyParts: [.core], motion: .strength),
        Exercise(name: "crunches", bodyParts: [.core], motion: .strength),
        Exercise(name: "dips", bodyParts: [.arms, .chest], motion: .strength),
        Exercise(name: "bench-press", bodyParts: [.chest, .arms], motion: .strength),
        Exercise(name: "deadlift", bodyParts: [.back, .legs], motion: .strength),
        Exercise(name: "shoulder-press", bodyParts: [.shoulders, .arms], motion: .strength),
        Exercise(name: "bicep-curls", bodyParts: [.arms], motion: .strength),
        Exercise(name: "calf-raises", bodyParts: [.legs], motion: .strength),
        Exercise(name: "glute-bridge", bodyParts: [.legs, .core], motion: .strength),
        Exercise(name: "mountain-climbers", bodyParts: [.core, .legs], motion: .endurance),
        Exercise(name: "jumping-jacks", bodyParts: [.fullBody], motion: .endurance),
        Exercise(name: "jump-rope", bodyParts: [.legs], motion: .endurance),
        Exercise(name: "running", bodyParts: [.legs], motion: .endurance),
        Exercise(name: "cycling", bodyParts: [.legs], motion: .endurance),
        Exercise(name: "rowing", bodyParts: [.back, .arms, .legs], motion: .endurance),
        Exercise(name: "swimming", bodyParts: [.fullBody], motion: .endurance),
        Exercise(name: "walking", bodyParts: [.legs], motion: .endurance),
        Exercise(name: "stretching", bodyParts: [.fullBody], motion: .mobility),
        Exercise(name: "yoga", bodyParts: [.fullBody], motion: .mobility),
        Exercise(name: "hip-openers", bodyParts: [.legs], motion: .mobility),
        Exercise(name: "shoulder-circles", bodyParts: [.shoulders], motion: .mobility),
    ]
}
