import Foundation
import HealthModel
import VaultEvents

extension AppleHealthImporter {
    /// The route files workouts named that `find` finds (in the workouts' order), and how many
    /// were missing or named a place outside `workout-routes/` (never read).
    static func locateRoutes<Found>(_ routes: [RouteReference], base: String, find: (String) -> Found?)
        -> (found: [(route: RouteReference, file: Found)], missing: Int, outside: Int) {
        var found: [(route: RouteReference, file: Found)] = []
        var missing = 0, outside = 0
        var references: [String: Int] = [:]
        for route in routes { references[route.path, default: 0] += 1 }
        for var route in routes {
            route.sharedFile = references[route.path, default: 0] > 1
            guard isRouteFilePath(route.path) else {
                outside += 1
                continue
            }
            guard let file = find(join(base, route.path)) else {
                missing += 1
                continue
            }
            found.append((route, file))
        }
        return (found, missing, outside)
    }

    /// Parses one route file, whose contents `produce` hands over, and emits its route (see
    /// `emitRoute`).
    func importRoute(_ route: RouteReference, label: String, name: String, _ produce: ((Data) throws -> Void) throws -> Void) throws {
        var gpx = GPXHandler()
        let outcome = Result<GPXHandler, Error> {
            try Self.parse(into: &gpx, produce)
            return gpx
        }
        try emitRoute(route, label: label, name: name, outcome)
    }

    /// Emits the route a route file gave; a file that could not be read or does not parse is
    /// skipped with a warning naming it (`label`; `name` in the error).
    func emitRoute(_ route: RouteReference, label: String, name: String, _ outcome: Result<GPXHandler, Error>) throws {
        let gpx: GPXHandler
        switch outcome {
        case .success(let parsed): gpx = parsed
        case .failure(let error):
            // The route alone is skipped: not the XML error's "nothing was imported".
            let reason = switch Self.translate(error, name: name) {
            case ImportError.notWellFormed(let path, let location, let message): "\(path):\(location): \(message)"
            case let other: "\(other)"
            }
            sink.warn("route file \(label) skipped: \(reason)")
            return
        }
        if gpx.skipped > 0 { sink.warn("\(gpx.skipped) route point(s) without a readable position or time skipped in \(route.path)") }
        var points = gpx.points
        // A file two routes name: each takes the points inside its own span, none twice.
        if route.sharedFile, let start = route.start, let end = route.end {
            points = points.filter { $0.time >= start.seconds - 1 && $0.time <= end.seconds + 1 }
            guard !points.isEmpty else { return }
        }
        var workoutStart = route.workoutStart
        if route.unreferenced {
            guard let first = points.first else { return }
            workoutStart = HealthTimestamp(seconds: first.time, utcOffset: 0)
        }
        try sink.emit(.route(WorkoutRoute(workoutStart: workoutStart, filePath: route.path, points: points)))
    }

    /// A GPX file alone (any app's track): its points as a route of their own, placed at its first
    /// point. A file with no point that has a position and a time adds nothing (refused).
    func importGPX(_ input: ImportInput, timeZone: TimeZone = .current) throws {
        var gpx = GPXHandler()
        do {
            try Self.parse(into: &gpx) { feed in try input.read(feed) }
        } catch {
            throw Self.translate(error, name: input.name)
        }
        if gpx.skipped > 0 { sink.warn("\(gpx.skipped) track point(s) without a readable position or time skipped") }
        guard let first = gpx.points.first else {
            sink.reject(max(gpx.skipped, 1))
            sink.warn("1 track rejected: no point with a position and a time")
            return
        }
        let name = (input.name as NSString).lastPathComponent
        // A route file of an Apple export belongs to the export's workout; a track another app
        // wrote (Garmin Connect, Strava) is a workout of its own, with its heart rate and cadence.
        guard let creator = gpx.creator, !creator.lowercased().contains("apple") else {
            try sink.emit(.route(WorkoutRoute(workoutStart: HealthTimestamp(seconds: first.time, utcOffset: 0), filePath: name, points: gpx.points)))
            return
        }
        try GPXWorkout.emit(gpx, creator: creator, timeZone: timeZone, into: sink)
    }

    /// The one warning for route files that were missing (`place` says where they were looked
    /// for) and for references outside the export's route folder.
    func warnAboutRoutes(missing: Int, outside: Int, unreferenced: Int, place: String) {
        if missing > 0 { sink.warn("\(missing) route file(s) named by workouts are missing \(place)") }
        if outside > 0 { sink.warn("\(outside) route reference(s) outside workout-routes/ ignored (only files of the export are read)") }
        if unreferenced > 0 { sink.warn("\(unreferenced) route file(s) no workout names kept as routes of their own") }
    }
}

/// A GPX track of an app other than Apple's as a workout (docs/fit.md, "GPX and TCX"): its type
/// from the track's `<type>` (Strava's and Garmin's words and numbers), its span from its first
/// to its last point, its route, and its points' heart rate (and a ride's cadence) as samples;
/// the app (`creator`) is the source. GPX times are UTC; the local offset is the import's time
/// zone's at the start.
enum GPXWorkout {
    static func emit(_ gpx: GPXHandler, creator: String, timeZone: TimeZone, into sink: ImportSink) throws {
        guard let first = gpx.points.first, let last = gpx.points.last else { return }
        let offset = Int32(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(first.time))))
        func stamp(_ t: Int64) -> HealthTimestamp { HealthTimestamp(seconds: t, utcOffset: offset) }
        let source = HealthSource(name: creator)
        let type = activityType(gpx.trackType)
        let routeName = "gpx-\(first.time)"
        let workout = Workout(activityType: type, source: source, start: stamp(first.time), end: stamp(last.time),
                              duration: DecimalValue(double: Double(last.time - first.time) / 60),
                              routes: [WorkoutRouteReference(source: source, start: stamp(first.time), end: stamp(last.time), filePath: routeName)])
        try sink.emit(.workout(workout))
        try sink.emit(.route(WorkoutRoute(workoutStart: stamp(first.time), filePath: routeName, points: gpx.points)))
        for (time, bpm) in gpx.heartRates {
            try sink.emit(sample: .reading("HKQuantityTypeIdentifierHeartRate", bpm, unit: "count/min", at: stamp(time), source: source))
        }
        if type == "HKWorkoutActivityTypeCycling" {
            for (time, rpm) in gpx.cadences {
                try sink.emit(sample: .reading("HKQuantityTypeIdentifierCyclingCadence", rpm, unit: "count/min", at: stamp(time), source: source))
            }
        }
    }

    /// The activity type of a GPX track's `<type>`: words (`running`, `cycling`, `Ride`) or
    /// Strava's numbers (1 ride, 9 run, 10 walk, 4 hike).
    static func activityType(_ text: String?) -> String {
        let word = (text ?? "").lowercased()
        let table: [(String, String)] = [
            ("run", "Running"), ("9", "Running"), ("ride", "Cycling"), ("cycl", "Cycling"), ("bik", "Cycling"), ("1", "Cycling"),
            ("walk", "Walking"), ("10", "Walking"), ("hik", "Hiking"), ("4", "Hiking"), ("swim", "Swimming"), ("row", "Rowing"),
            ("ski", "CrossCountrySkiing"),
        ]
        let match = table.first { word == $0.0 || ($0.0.count > 2 && word.contains($0.0)) }?.1 ?? "Other"
        return "HKWorkoutActivityType" + match
    }
}
