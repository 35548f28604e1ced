/// The device string of a record (`<<HKDevice: 0x…>, name:Apple Watch, manufacturer:Apple Inc.,
/// model:Watch, hardware:Watch6,7, software:10.2>`), without the object address that changes
/// from record to record. `model` decides source priority, not the name the user gave the device.
public struct HealthDevice: Hashable, Sendable {
    public var name: String?
    public var manufacturer: String?
    public var model: String?
    public var hardware: String?
    public var software: String?

    public init(name: String? = nil, manufacturer: String? = nil, model: String? = nil, hardware: String? = nil, software: String? = nil) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.hardware = hardware
        self.software = software
    }
}

/// Which app and device wrote a sample.
///
/// A value held in one shared, unchanging box: an export repeats a handful of sources over
/// millions of samples, so a sample carries one reference (8 bytes, one reference count) through
/// the import's threads instead of seven strings (112 bytes, seven counts). Setting a field puts
/// the source in a box of its own; equal sources compare equal whether or not they share one.
public struct HealthSource: Hashable, Sendable {
    @usableFromInline final class Box: Sendable {
        let name: String
        let version: String?
        let device: HealthDevice?

        init(name: String, version: String?, device: HealthDevice?) {
            self.name = name
            self.version = version
            self.device = device
        }
    }

    @usableFromInline var box: Box

    public init(name: String, version: String? = nil, device: HealthDevice? = nil) {
        box = Box(name: name, version: version, device: device)
    }

    public var name: String {
        get { box.name }
        set { box = Box(name: newValue, version: box.version, device: box.device) }
    }

    public var version: String? {
        get { box.version }
        set { box = Box(name: box.name, version: newValue, device: box.device) }
    }

    public var device: HealthDevice? {
        get { box.device }
        set { box = Box(name: box.name, version: box.version, device: newValue) }
    }

    /// The device's model, read without copying the device's other strings (the read models
    /// class a source by it, once per sample).
    public var deviceModel: String? { box.device?.model }

    /// Whether both are the same instance, not only equal: a parser hands out one instance per
    /// source it meets, so a memo of recent sources compares a word, not seven strings.
    @inlinable
    public func isIdentical(to other: HealthSource) -> Bool { box === other.box }

    public static func == (a: HealthSource, b: HealthSource) -> Bool {
        a.box === b.box || (a.box.name == b.box.name && a.box.version == b.box.version && a.box.device == b.box.device)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(box.name)
        hasher.combine(box.version)
        hasher.combine(box.device)
    }
}

/// A key and value of a record's metadata.
public struct MetadataEntry: Hashable, Sendable {
    public var key: String
    public var value: String

    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}

/// The value of a sample: a quantity in its canonical unit, a category value, or none.
public enum SampleValue: Hashable, Sendable {
    case quantity(DecimalValue, unit: String)
    case category(String)
    case none
}

/// One instantaneous heart rate of a heart-rate-variability record.
public struct HeartbeatEntry: Hashable, Sendable {
    public var bpm: DecimalValue
    /// As written (`10:41:29.63 PM`): a local clock time without a date.
    public var time: String

    public init(bpm: DecimalValue, time: String) {
        self.bpm = bpm
        self.time = time
    }
}

/// A quantity or category sample (`<Record>`).
public struct HealthSample: Hashable, Sendable {
    public var type: String
    public var source: HealthSource
    public var start: HealthTimestamp
    public var end: HealthTimestamp
    public var value: SampleValue
    public var metadata: [MetadataEntry] = []
    public var beats: [HeartbeatEntry] = []
    /// When HealthKit stored the sample (`creationDate`); absent in iOS 8 exports and in
    /// companion JSON and CSV files.
    public var creationDate: HealthTimestamp?

    /// The consent category of the sample's type.
    public var category: HealthCategory { HealthCategory.of(type: type) }

    public init(type: String, source: HealthSource, start: HealthTimestamp, end: HealthTimestamp, value: SampleValue, metadata: [MetadataEntry] = [], beats: [HeartbeatEntry] = [], creationDate: HealthTimestamp? = nil) {
        self.type = type
        self.source = source
        self.start = start
        self.end = end
        self.value = value
        self.metadata = metadata
        self.beats = beats
        self.creationDate = creationDate
    }
}

/// An event inside a workout (pause, resume, segment, lap, marker).
public struct WorkoutEvent: Hashable, Sendable {
    public var type: String
    public var date: HealthTimestamp
    /// Minutes.
    public var duration: DecimalValue?

    public init(type: String, date: HealthTimestamp, duration: DecimalValue? = nil) {
        self.type = type
        self.date = date
        self.duration = duration
    }
}

/// A statistic Apple computed for a workout (`<WorkoutStatistics>`).
public struct WorkoutStatistic: Hashable, Sendable {
    public var type: String
    public var start: HealthTimestamp?
    public var end: HealthTimestamp?
    public var sum: DecimalValue?
    public var average: DecimalValue?
    public var minimum: DecimalValue?
    public var maximum: DecimalValue?
    public var unit: String?

    public init(type: String, start: HealthTimestamp? = nil, end: HealthTimestamp? = nil, sum: DecimalValue? = nil, average: DecimalValue? = nil, minimum: DecimalValue? = nil, maximum: DecimalValue? = nil, unit: String? = nil) {
        self.type = type
        self.start = start
        self.end = end
        self.sum = sum
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.unit = unit
    }
}

/// A workout's reference to its route file.
public struct WorkoutRouteReference: Hashable, Sendable {
    public var source: HealthSource
    public var start: HealthTimestamp?
    public var end: HealthTimestamp?
    public var filePath: String?
    public var metadata: [MetadataEntry] = []

    public init(source: HealthSource, start: HealthTimestamp? = nil, end: HealthTimestamp? = nil, filePath: String? = nil, metadata: [MetadataEntry] = []) {
        self.source = source
        self.start = start
        self.end = end
        self.filePath = filePath
        self.metadata = metadata
    }
}

/// A workout (`<Workout>`), with totals in canonical units (minutes, metres, kcal).
public struct Workout: Hashable, Sendable {
    public var activityType: String
    public var source: HealthSource
    public var start: HealthTimestamp
    public var end: HealthTimestamp
    public var duration: DecimalValue?
    public var totalDistance: DecimalValue?
    public var totalEnergy: DecimalValue?
    public var metadata: [MetadataEntry] = []
    public var events: [WorkoutEvent] = []
    public var statistics: [WorkoutStatistic] = []
    public var routes: [WorkoutRouteReference] = []

    public init(activityType: String, source: HealthSource, start: HealthTimestamp, end: HealthTimestamp, duration: DecimalValue? = nil, totalDistance: DecimalValue? = nil, totalEnergy: DecimalValue? = nil, metadata: [MetadataEntry] = [], events: [WorkoutEvent] = [], statistics: [WorkoutStatistic] = [], routes: [WorkoutRouteReference] = []) {
        self.activityType = activityType
        self.source = source
        self.start = start
        self.end = end
        self.duration = duration
        self.totalDistance = totalDistance
        self.totalEnergy = totalEnergy
        self.metadata = metadata
        self.events = events
        self.statistics = statistics
        self.routes = routes
    }
}

/// One point of a workout route (GPX `trkpt`). Coordinates in degrees, altitude in metres,
/// speed in m/s, course in degrees, accuracies in metres.
public struct RoutePoint: Hashable, Sendable {
    public var time: Int64
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?
    public var speed: Double?
    public var course: Double?
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?

    public init(time: Int64, latitude: Double, longitude: Double, altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
    }
}

extension RoutePoint {
    /// Metres, from the Dead Sea shore to an airliner's ceiling, with room to spare.
    public static func plausible(altitude v: Double) -> Double? { (-1_000...20_000).contains(v) ? v : nil }
    /// m/s; Apple writes -1 for "unknown".
    public static func plausible(speed v: Double) -> Double? { (-1...1_000).contains(v) ? v : nil }
    /// Degrees; Apple writes -1 for "unknown".
    public static func plausible(course v: Double) -> Double? { (-1...360).contains(v) ? v : nil }
    /// Metres; Apple writes -1 for "unknown".
    public static func plausible(accuracy v: Double) -> Double? { (-1...100_000).contains(v) ? v : nil }
}

/// The points of one route file, tied to its workout by the workout's start and the file path.
public struct WorkoutRoute: Hashable, Sendable {
    public var workoutStart: HealthTimestamp
    public var filePath: String
    public var points: [RoutePoint]

    public init(workoutStart: HealthTimestamp, filePath: String, points: [RoutePoint]) {
        self.workoutStart = workoutStart
        self.filePath = filePath
        self.points = points
    }
}

/// Apple's own daily ring values and goals (`<ActivitySummary>`): kept as reference values.
public struct ActivitySummary: Hashable, Sendable {
    /// Days since 1970-01-01 (the local day it summarises).
    public var day: Int64
    /// kcal.
    public var activeEnergy: DecimalValue?
    public var activeEnergyGoal: DecimalValue?
    /// Minutes.
    public var moveTime: DecimalValue?
    public var moveTimeGoal: DecimalValue?
    public var exerciseTime: DecimalValue?
    public var exerciseTimeGoal: DecimalValue?
    public var standHours: DecimalValue?
    public var standHoursGoal: DecimalValue?

    public init(day: Int64, activeEnergy: DecimalValue? = nil, activeEnergyGoal: DecimalValue? = nil, moveTime: DecimalValue? = nil, moveTimeGoal: DecimalValue? = nil, exerciseTime: DecimalValue? = nil, exerciseTimeGoal: DecimalValue? = nil, standHours: DecimalValue? = nil, standHoursGoal: DecimalValue? = nil) {
        self.day = day
        self.activeEnergy = activeEnergy
        self.activeEnergyGoal = activeEnergyGoal
        self.moveTime = moveTime
        self.moveTimeGoal = moveTimeGoal
        self.exerciseTime = exerciseTime
        self.exerciseTimeGoal = exerciseTimeGoal
        self.standHours = standHours
        self.standHoursGoal = standHoursGoal
    }
}

/// A correlation (blood pressure, food). Its member records also appear at top level in the
/// export, where they are imported; the correlation itself keeps its own fields.
public struct Correlation: Hashable, Sendable {
    public var type: String
    public var source: HealthSource
    public var start: HealthTimestamp
    public var end: HealthTimestamp
    public var metadata: [MetadataEntry] = []
    /// When HealthKit stored the correlation (`creationDate`), when the export gives it.
    public var creationDate: HealthTimestamp?

    public init(type: String, source: HealthSource, start: HealthTimestamp, end: HealthTimestamp, metadata: [MetadataEntry] = [], creationDate: HealthTimestamp? = nil) {
        self.type = type
        self.source = source
        self.start = start
        self.end = end
        self.metadata = metadata
        self.creationDate = creationDate
    }
}

extension Correlation {
    /// Whether a HealthKit correlation can hold a sample of `type`: a blood pressure its systolic
    /// and diastolic readings, a food its dietary quantities (the members `HKCorrelationType`
    /// allows). A sample of any other type is never a correlation's member.
    public static func mayHold(memberType type: String) -> Bool {
        type.hasPrefix("HKQuantityTypeIdentifierDietary")
            || type == "HKQuantityTypeIdentifierBloodPressureSystolic" || type == "HKQuantityTypeIdentifierBloodPressureDiastolic"
    }
}

/// Elements the importer keeps without a model of their own (clinical records, vision
/// prescriptions, audiograms): element name and attributes, under their category.
public struct GenericRecord: Hashable, Sendable {
    public var element: String
    public var attributes: [MetadataEntry]

    /// The attribute, last when present, holding a resource the record names (a clinical
    /// record's FHIR JSON): kept, and not part of what tells records apart.
    public static let resourceKey = "resource"

    public init(element: String, attributes: [MetadataEntry]) {
        self.element = element
        self.attributes = attributes
    }
}


/// An ECG recording (`electrocardiograms/ecg_2024-05-01.csv` in an export): when it was
/// recorded, its header fields as written (classification, symptoms, software version, device,
/// sample rate, lead, unit; not the person's name or birth date, which are no health data and
/// repeat the profile), and its voltage series.
public struct Electrocardiogram: Hashable, Sendable {
    public var recorded: HealthTimestamp
    public var fields: [MetadataEntry]
    /// Voltages in thousandths of `unit` (µV as Apple writes them: nanovolts), in order.
    public var millivoltages: [Int64]
    public var unit: String
    /// Samples per second, from the `Sample Rate` field (`512 hertz`); nil when unreadable.
    public var sampleRate: Double?

    public init(recorded: HealthTimestamp, fields: [MetadataEntry], millivoltages: [Int64], unit: String, sampleRate: Double?) {
        self.recorded = recorded
        self.fields = fields
        self.millivoltages = millivoltages
        self.unit = unit
        self.sampleRate = sampleRate
    }

    /// The HealthKit type ECG recordings are listed and shared under.
    public static let type = "HKElectrocardiogramType"

    /// When the recording ended: its start plus samples over rate (the start when the rate is unknown).
    public var end: HealthTimestamp {
        guard let rate = sampleRate, rate >= 1, rate.isFinite,
              let seconds = Int64(exactly: (Double(millivoltages.count) / rate).rounded()) else { return recorded }
        let (end, overflow) = recorded.seconds.addingReportingOverflow(seconds)
        return overflow ? recorded : HealthTimestamp(seconds: end, utcOffset: recorded.utcOffset)
    }

    /// A header field by its name as written (`Classification`).
    public func field(_ name: String) -> String? { fields.first { $0.key == name }?.value }
}
