import HealthModel

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
    /// Categories and months whose samples were erased: what they brought goes.
    case erased([ErasedMonth])
    /// Something held that no figure is computed from (a sleep stage, a workout, a route, an
    /// ECG, `Me`): counted per type and day, for `types`. Quantity samples, stand hours and
    /// Apple's summaries are counted from their own inputs.
    case recorded(RecordedItem)
    /// A workout, for `workouts` (and counted for `types` under its activity type).
    case workout(WorkoutItem)
    /// A sleep-analysis sample, for `sleep` (and counted for `types`).
    case sleep(SleepSegment)
    /// A set of an exercise, for `stats` (and counted for `types` as `practice`).
    case practice(PracticeItem)
    /// A quantity sample replaced by a re-posted value: what it brought goes, and its event is
    /// remembered so that exports skip it. Boxed: inline, its two optional samples made every
    /// input twice a cumulative sample's size, and an import moves half a million of them.
    indirect case withdrawn(Withdrawal)
    /// An input of a record that carries metadata, and that metadata, counted per type, key,
    /// value and day for `sql` (`record_metadata`). Only records with metadata are wrapped.
    indirect case annotated(ProjectionInput, RecordMetadata)

    /// The input without its metadata: what the figures are made of.
    public var withoutMetadata: ProjectionInput {
        if case .annotated(let inner, _) = self { return inner }
        return self
    }

    /// The HealthKit type of Apple's stand-hour records, whose category the stand hours and
    /// Apple's ring summaries are erased with.
    public static let standHourType = "HKCategoryTypeIdentifierAppleStandHour"
    /// HealthKit's sleep-analysis type.
    public static let sleepType = "HKCategoryTypeIdentifierSleepAnalysis"
    /// The type `types` lists Apple's daily ring summaries under.
    public static let activitySummaryType = "HKActivitySummaryTypeIdentifier"
}

/// One category's samples that started in one local month, erased; a nil month is the
/// category's undated records (`Me`).
public struct ErasedMonth: Sendable, Equatable {
    public var category: HealthCategory
    public var month: LocalMonth?

    public init(category: HealthCategory, month: LocalMonth?) {
        self.category = category
        self.month = month
    }
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
    /// Its metadata's `MetadataDigest` (0: none) and when HealthKit stored it (seconds since 1970,
    /// nil when not known): an app's rewritten copies of one sample differ only in the latter,
    /// and count once (`RewrittenCopies`).
    public var metadataDigest: UInt32
    public var created: Int64?

    public init(metric: String, unit: String, source: SourceKey, start: Int64, end: Int64, utcOffset: Int32, value: Double,
                metadataDigest: UInt32 = 0, created: Int64? = nil) {
        self.metric = metric
        self.unit = unit
        self.source = source
        self.start = start
        self.end = end
        self.utcOffset = utcOffset
        self.value = value
        self.metadataDigest = metadataDigest
        self.created = created
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

/// A record counted for `types`: its type (a HealthKit identifier, a workout activity type, an
/// export element), the unit its values are read in, its consent category and the local day it
/// starts on (nil for undated records).
public struct RecordedItem: Sendable, Equatable {
    public var type: String
    public var unit: String?
    public var category: HealthCategory
    public var day: LocalDay?
    /// How long it lasted (a mindful session), 0 for an event; `summary` of a category type
    /// gives minutes when its records last, counts when they do not.
    public var minutes: Double

    public init(type: String, unit: String? = nil, category: HealthCategory, day: LocalDay?, minutes: Double = 0) {
        self.type = type
        self.unit = unit
        self.category = category
        self.day = day
        self.minutes = minutes
    }
}

/// A workout's figures: its activity type, start (seconds since 1970, UTC, with the offset it was
/// recorded in), minutes, kcal and metres (nil when it has none).
public struct WorkoutItem: Sendable, Equatable {
    public var type: String
    public var start: Int64
    public var utcOffset: Int32
    public var minutes: Double
    public var energy: Double?
    public var distance: Double?
    /// Where it came from and when it ended: the same workout from two sources (a watch's FIT
    /// file and its sync to Apple Health) counts once (`WorkoutDeduplication`).
    public var source: SourceKey?
    public var end: Int64?

    public init(type: String, start: Int64, utcOffset: Int32, minutes: Double, energy: Double?, distance: Double?,
                source: SourceKey? = nil, end: Int64? = nil) {
        self.type = type
        self.start = start
        self.utcOffset = utcOffset
        self.minutes = minutes
        self.energy = energy
        self.distance = distance
        self.source = source
        self.end = end
    }
}

/// A record's metadata as the read models count it: its type (a HealthKit identifier, a
/// workout's activity type), consent category, local start day, and entries.
public struct RecordMetadata: Sendable, Equatable {
    public var type: String
    public var category: HealthCategory
    public var day: LocalDay
    public var entries: [MetadataEntry]

    public init(type: String, category: HealthCategory, day: LocalDay, entries: [MetadataEntry]) {
        self.type = type
        self.category = category
        self.day = day
        self.entries = entries
    }
}

/// A replaced quantity sample: the hash of its content (what exports match it by: log indexes
/// change when the log is rewritten), its category and local start day (for erasure), and the
/// input it had fed (exactly one of the two).
public struct Withdrawal: Sendable {
    public var contentHash: Int64
    public var category: HealthCategory
    public var day: LocalDay
    public var cumulative: CumulativeSample?
    public var discrete: DiscreteSample?
    /// Its metadata, counted off `record_metadata`; nil when it had none.
    public var metadata: RecordMetadata?

    public init(contentHash: Int64, category: HealthCategory, day: LocalDay, cumulative: CumulativeSample? = nil, discrete: DiscreteSample? = nil,
                metadata: RecordMetadata? = nil) {
        self.contentHash = contentHash
        self.category = category
        self.day = day
        self.cumulative = cumulative
        self.discrete = discrete
        self.metadata = metadata
    }
}

/// One set of an exercise: when (its local day), which exercise, what it works, repetitions and
/// seconds (nil when not given).
public struct PracticeItem: Sendable, Equatable {
    public var day: LocalDay
    public var at: Int64
    public var exercise: String
    public var bodyParts: [BodyPart]
    public var motion: Motion
    public var repetitions: Int
    public var seconds: Int?

    public init(day: LocalDay, at: Int64, exercise: String, bodyParts: [BodyPart], motion: Motion, repetitions: Int, seconds: Int?) {
        self.day = day
        self.at = at
        self.exercise = exercise
        self.bodyParts = bodyParts
        self.motion = motion
        self.repetitions = repetitions
        self.seconds = seconds
    }

    /// The type `types` counts sets under.
    public static let type = "practice"
}
