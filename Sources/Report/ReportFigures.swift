import HealthModel
import Projections

/// What a report draws, from whichever side holds it: a person's vault (its read models) or a
/// researcher's opened bundle (its daily lines). The report lays these figures out and computes
/// none of them but averages and the arcs' geometry.
public struct ReportFigures {
    /// Days with ring figures, ascending.
    public var rings: [RingDay]
    /// The last day with figures: a report without `--to` ends there.
    public var lastDay: LocalDay?
    public var streaks: Streaks
    /// A metric's figure per period (`steps`, `active-energy`, `exercise-time`, `stand-hour`).
    public var summary: (_ metric: String, _ period: SummaryPeriod, _ from: LocalDay, _ to: LocalDay) throws -> [PeriodFigure]
    /// Nights ending inside the range, ascending.
    public var nights: (_ from: LocalDay, _ to: LocalDay) throws -> [NightFigures]
    /// Workouts inside the range per activity type (HealthKit's name).
    public var workouts: (_ from: LocalDay, _ to: LocalDay) throws -> [(type: String, count: Int, minutes: Double)]
    /// Sets and workouts per period with their shares per body part and motion (`stats`).
    public var training: (_ period: SummaryPeriod, _ from: LocalDay, _ to: LocalDay) throws -> [TrainingPeriod]
    /// Each tracker's days up to a day.
    public var trackers: (_ to: LocalDay) throws -> [TrackerStrip]
    /// The last day any tracker has an entry for (a person logs habits after their last import).
    public var lastTrackerDay: LocalDay? = nil
    /// Whether the rings' goals are the person's or Apple's, not the assumed defaults.
    public var goalsKnown = true

    public struct PeriodFigure {
        public var period: String
        public var value: Double
        public var unit: String

        public init(period: String, value: Double, unit: String) {
            self.period = period
            self.value = value
            self.unit = unit
        }
    }

    /// Minutes of a night by stage.
    public struct NightFigures {
        public var night: LocalDay
        public var asleep: Double
        public var core: Double
        public var deep: Double
        public var rem: Double
        public var awake: Double

        public init(night: LocalDay, asleep: Double, core: Double, deep: Double, rem: Double, awake: Double) {
            (self.night, self.asleep, self.core, self.deep, self.rem, self.awake) = (night, asleep, core, deep, rem, awake)
        }
    }

    /// A tracker's logged days: `success` is nil where the definition is not known (a bundle
    /// carries the daily levels, not the tracker's success set).
    public struct TrackerStrip {
        public var name: String
        public var levels: String
        public var days: [LocalDay: Bool?]
        public var streak: (current: Int, longest: Int)?

        public init(name: String, levels: String, days: [LocalDay: Bool?], streak: (current: Int, longest: Int)?) {
            (self.name, self.levels, self.days, self.streak) = (name, levels, days, streak)
        }
    }

    /// Figures from their sources (a vault's queries: `vaultctl report` makes them).
    public init(rings: [RingDay], lastDay: LocalDay?, streaks: Streaks,
                summary: @escaping (String, SummaryPeriod, LocalDay, LocalDay) throws -> [PeriodFigure],
                nights: @escaping (LocalDay, LocalDay) throws -> [NightFigures],
                workouts: @escaping (LocalDay, LocalDay) throws -> [(type: String, count: Int, minutes: Double)],
                training: @escaping (SummaryPeriod, LocalDay, LocalDay) throws -> [TrainingPeriod],
                trackers: @escaping (LocalDay) throws -> [TrackerStrip], lastTrackerDay: LocalDay?, goalsKnown: Bool) {
        self.rings = rings
        self.lastDay = lastDay
        self.streaks = streaks
        self.summary = summary
        self.nights = nights
        self.workouts = workouts
        self.training = training
        self.trackers = trackers
        self.lastTrackerDay = lastTrackerDay
        self.goalsKnown = goalsKnown
    }
}
