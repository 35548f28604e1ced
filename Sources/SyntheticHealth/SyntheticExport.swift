import Foundation
import HealthModel

/// Writes realistic synthetic Apple Health exports, for tests, the demo and the benchmarks.
///
/// One person, one year by default: an iPhone and an Apple Watch both count the same walks,
/// except while the Watch charges in the morning (the commute is counted by the phone alone) and
/// during an office walk with the phone left on the desk (the Watch alone). Berlin time with its
/// DST switches, and a ten-day trip to New York. Runs with GPX routes, stand hours, sleep stages
/// across midnight, heart-rate-variability records with their beat lists, a weekly weight, and
/// one `ActivitySummary` a day whose values follow from the Watch's samples (as Apple's do).
public enum SyntheticExport {
    /// What to generate.
    public struct Options: Sendable {
        /// Days to cover, starting at `firstDay`.
        public var days: Int
        /// `YYYY-MM-DD` of the first day.
        public var firstDay: (year: Int, month: Int, day: Int)
        public var seed: UInt64
        /// Write the DTD with iOS 16's unclosed `<!ATTLIST VisionPrescription`, as real exports of
        /// that time have it (other tools' XML parsers stop there); false writes it closed.
        public var iOS16DTDBug: Bool
        /// Day index (from `firstDay`) on which the ten-day New York trip starts.
        public var tripStart: Int

        public init(days: Int = 365, firstDay: (year: Int, month: Int, day: Int) = (2024, 1, 1), seed: UInt64 = 1,
                    iOS16DTDBug: Bool = true, tripStart: Int = 160) {
            self.days = days
            self.firstDay = firstDay
            self.seed = seed
            self.iOS16DTDBug = iOS16DTDBug
            self.tripStart = tripStart
        }
    }

    /// The true, deduplicated figures of one local day, as the Health app would show them.
    public struct DayTruth: Equatable, Sendable {
        public var steps: Int = 0
        /// Active energy in kcal (Watch only, so no double counting to remove).
        public var activeEnergy: Double = 0
        public var exerciseMinutes: Int = 0
        public var standHours: Int = 0
        public var moveGoal: Int = 0
        /// Runs that started this day, their minutes, and kcal and metres as their statistics
        /// give them (the Workout element carries no totals, as in recent exports).
        public var workouts: Int = 0
        public var workoutMinutes: Int = 0
        public var workoutEnergy: Double = 0
        public var workoutDistance: Double = 0
        /// The night that ended this morning, in minutes: in bed (the phone), and the Watch's stages.
        public var sleepInBed: Double = 0
        public var sleepCore: Double = 0
        public var sleepDeep: Double = 0
        public var sleepREM: Double = 0
        public var sleepAwake: Double = 0
    }

    /// What was written.
    public struct Summary: Sendable {
        /// Top-level records of every kind (Record, Workout, ActivitySummary, Me) in the XML.
        public var records: Int
        public var routeFiles: Int
        /// Per local day (days since 1970), the Health app's figures.
        public var days: [Int64: DayTruth]
        public var xmlBytes: Int64
    }

    /// Writes `export.xml` and `workout-routes/*.gpx` under `directory/apple_health_export/`.
    @discardableResult
    public static func writeFolder(at directory: String, options: Options = Options()) throws -> Summary {
        let root = directory + "/apple_health_export"
        try FileManager.default.createDirectory(atPath: root + "/workout-routes", withIntermediateDirectories: true)
        var generator = Generator(options: options, root: root)
        return try generator.run()
    }
}
