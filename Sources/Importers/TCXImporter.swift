import Foundation
import HealthModel
import VaultEvents

/// Reads Garmin's Training Center XML (`.tcx`): each `Activity` (its sport and laps: start, time,
/// distance, calories, heart rate) and its track points (time, position, altitude, heart rate,
/// cadence, and the `TPX` extension's speed and watts). Element names are matched without their
/// namespace prefix (`ns3:Speed`).
struct TCXHandler: XMLTokenHandler {
    struct Lap {
        var start: Int64?
        var seconds: Double?
        var meters: Double?
        var calories: Double?
        var averageHeartRate: Double?
        var maximumHeartRate: Double?
    }

    struct Point {
        var time: Int64?
        var latitude: Double?
        var longitude: Double?
        var altitude: Double?
        var heartRate: Double?
        var cadence: Double?
        var speed: Double?
        var watts: Double?
    }

    struct Activity {
        var sport: String?
        var id: Int64?
        var laps: [Lap] = []
        var points: [Point] = []
    }

    private(set) var activities: [Activity] = []
    /// The device or app named under `Creator/Name`, when given.
    private(set) var creator: String?
    private(set) var skipped = 0
    private var path: [String] = []
    private var text = ""

    /// An ISO 8601 time (`2024-03-05T07:00:00Z`) in seconds since 1970.
    private static func seconds(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBytes { HealthTimestamp.parseISO8601($0) }?.seconds
    }

    mutating func startElement(name: UnsafeRawBufferPointer, attributes: [XMLAttribute], bytes: UnsafeRawBufferPointer, tokenizer: borrowing XMLLocator) throws {
        let local = String(decoding: localName(name), as: UTF8.self)
        path.append(local)
        text = ""
        let tag = Tag(bytes: bytes, attributes: attributes)
        switch local {
        case "Activity":
            activities.append(Activity(sport: tag.value("Sport").map { String(decoding: $0, as: UTF8.self) }))
        case "Lap" where !activities.isEmpty:
            let start = tag.value("StartTime").flatMap { HealthTimestamp.parseISO8601($0) }?.seconds
            activities[activities.count - 1].laps.append(Lap(start: start))
        case "Trackpoint" where !activities.isEmpty:
            activities[activities.count - 1].points.append(Point())
        default:
            break
        }
    }

    mutating func text(_ bytes: UnsafeRawBufferPointer) throws {
        text += String(decoding: bytes, as: UTF8.self)
    }

    mutating func endElement(name: UnsafeRawBufferPointer) throws {
        defer {
            path.removeLast()
            text = ""
        }
        let local = path.last ?? ""
        let parent = path.count >= 2 ? path[path.count - 2] : ""
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let number = Double(value).flatMap { $0.isFinite ? $0 : nil }
        guard !activities.isEmpty else {
            if local == "Name", parent == "Creator", creator == nil, !value.isEmpty { creator = value }
            return
        }
        let a = activities.count - 1
        if local == "Name", parent == "Creator", creator == nil, !value.isEmpty { creator = value }
        if path.contains("Trackpoint"), !activities[a].points.isEmpty {
            let p = activities[a].points.count - 1
            switch (local, parent) {
            case ("Time", "Trackpoint"): activities[a].points[p].time = Self.seconds(value)
            case ("LatitudeDegrees", _): activities[a].points[p].latitude = number.flatMap { abs($0) <= 90 ? $0 : nil }
            case ("LongitudeDegrees", _): activities[a].points[p].longitude = number.flatMap { abs($0) <= 180 ? $0 : nil }
            case ("AltitudeMeters", _): activities[a].points[p].altitude = number.flatMap { RoutePoint.plausible(altitude: $0) }
            case ("Value", "HeartRateBpm"): activities[a].points[p].heartRate = number.flatMap { (20...250).contains($0) ? $0 : nil }
            case ("Cadence", _), ("RunCadence", _): activities[a].points[p].cadence = number.flatMap { (0...300).contains($0) ? $0 : nil }
            case ("Speed", _): activities[a].points[p].speed = number.flatMap { RoutePoint.plausible(speed: $0) }
            case ("Watts", _): activities[a].points[p].watts = number.flatMap { (0...3000).contains($0) ? $0 : nil }
            case ("Trackpoint", _):
                if activities[a].points[p].time == nil {
                    activities[a].points.removeLast()
                    skipped += 1
                }
            default: break
            }
            return
        }
        if local == "Id", parent == "Activity" {
            activities[a].id = Self.seconds(value)
        }
        guard path.contains("Lap"), !activities[a].laps.isEmpty else { return }
        let l = activities[a].laps.count - 1
        switch (local, parent) {
        case ("TotalTimeSeconds", "Lap"): activities[a].laps[l].seconds = number
        case ("DistanceMeters", "Lap"): activities[a].laps[l].meters = number
        case ("Calories", "Lap"): activities[a].laps[l].calories = number
        case ("Value", "AverageHeartRateBpm"): activities[a].laps[l].averageHeartRate = number
        case ("Value", "MaximumHeartRateBpm"): activities[a].laps[l].maximumHeartRate = number
        default: break
        }
    }
}

/// A TCX file's activities as workouts (docs/fit.md, "GPX and TCX"): sport as the activity type,
/// start from its id or first lap, laps as lap events, time, distance and calories summed over
/// its laps, heart rate as statistics and samples, its positions as a route, a ride's cadence and
/// power and a run's speed and power as samples. The creator (device) is the source.
enum TCXWorkout {
    static func importTCX(_ input: ImportInput, into sink: ImportSink, timeZone: TimeZone) throws {
        var handler = TCXHandler()
        do {
            try AppleHealthImporter.parse(into: &handler) { feed in try input.read(feed) }
        } catch {
            throw AppleHealthImporter.translate(error, name: input.name)
        }
        if handler.skipped > 0 { sink.warn("\(handler.skipped) track point(s) without a time skipped") }
        let source = HealthSource(name: handler.creator ?? "TCX file", device: handler.creator.map { HealthDevice(model: $0) })
        for activity in handler.activities {
            let times = activity.points.compactMap(\.time)
            guard let start = activity.id ?? activity.laps.compactMap(\.start).min() ?? times.min() else {
                sink.reject(1)
                sink.warn("1 activity rejected: no start time")
                continue
            }
            let lapEnd = activity.laps.compactMap { lap in lap.start.flatMap { s in lap.seconds.map { s + Int64($0.rounded()) } } }.max()
            let end = max(start, lapEnd ?? start, times.max() ?? start)
            let offset = Int32(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(start))))
            func stamp(_ t: Int64) -> HealthTimestamp { HealthTimestamp(seconds: t, utcOffset: offset) }
            func sum(_ values: [Double?]) -> DecimalValue? {
                let present = values.compactMap { $0 }
                return present.isEmpty ? nil : DecimalValue(double: present.reduce(0, +))
            }
            let type = "HKWorkoutActivityType" + (activity.sport == "Running" ? "Running" : activity.sport == "Biking" ? "Cycling" : "Other")
            var workout = Workout(activityType: type, source: source, start: stamp(start), end: stamp(end),
                                  duration: sum(activity.laps.map { $0.seconds.map { $0 / 60 } }),
                                  totalDistance: sum(activity.laps.map(\.meters)), totalEnergy: sum(activity.laps.map(\.calories)))
            workout.events = activity.laps.compactMap { lap in
                lap.start.map { WorkoutEvent(type: "HKWorkoutEventTypeLap", date: stamp($0), duration: lap.seconds.map { DecimalValue(double: $0 / 60) }) }
            }
            let maxima = activity.laps.compactMap(\.maximumHeartRate)
            if !maxima.isEmpty {
                workout.statistics = [WorkoutStatistic(type: "HKQuantityTypeIdentifierHeartRate", start: stamp(start), end: stamp(end),
                                                       maximum: DecimalValue(double: maxima.max()!), unit: "count/min")]
            }
            let points = activity.points.compactMap { p -> RoutePoint? in
                guard let time = p.time, let latitude = p.latitude, let longitude = p.longitude else { return nil }
                return RoutePoint(time: time, latitude: latitude, longitude: longitude, altitude: p.altitude, speed: p.speed)
            }
            let routeName = "tcx-\(start)"
            if !points.isEmpty { workout.routes = [WorkoutRouteReference(source: source, start: stamp(start), end: stamp(end), filePath: routeName)] }
            try sink.emit(.workout(workout))
            if !points.isEmpty { try sink.emit(.route(WorkoutRoute(workoutStart: stamp(start), filePath: routeName, points: points))) }
            for p in activity.points {
                guard let time = p.time else { continue }
                func add(_ type: String, _ value: Double?, _ unit: String) throws {
                    guard let value else { return }
                    try sink.emit(sample: .reading(type, value, unit: unit, at: stamp(time), source: source))
                }
                try add("HKQuantityTypeIdentifierHeartRate", p.heartRate, "count/min")
                if type.hasSuffix("Cycling") {
                    try add("HKQuantityTypeIdentifierCyclingCadence", p.cadence, "count/min")
                    try add("HKQuantityTypeIdentifierCyclingPower", p.watts, "W")
                    try add("HKQuantityTypeIdentifierCyclingSpeed", p.speed, "m/s")
                } else if type.hasSuffix("Running") {
                    try add("HKQuantityTypeIdentifierRunningPower", p.watts, "W")
                    try add("HKQuantityTypeIdentifierRunningSpeed", p.speed, "m/s")
                }
            }
        }
    }
}
