import Foundation
import HealthModel
import VaultEvents

/// Reads what a phone companion app posts, in either shape the spec names:
/// - Yappi: `{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38}]}`,
///   or an array of such objects; times local (in `timeZone`).
/// - Health Auto Export: `{"data":{"metrics":[{"name":"step_count","units":"count","data":[{"date":…,"qty":12,"source":"Apple Watch"}]}],"workouts":[…]}}`;
///   dates with their offset.
///
/// A metric without a known HealthKit type is kept under `other` with its own name. Each entry
/// that cannot be read is rejected alone. The same code reads a file (`vaultctl import`) and a
/// request's body (`vaultctl serve`), which names the paired app it came from.
public struct CompanionJSONImporter {
    let sink: ImportSink
    let timeZone: TimeZone
    /// The paired app a post came from; nil for a file, whose samples keep the source
    /// "Companion app" they always had.
    let app: String?
    /// Companion posts are small; a larger file is refused rather than read whole.
    static let maxBytes = 64 << 20

    init(sink: ImportSink, timeZone: TimeZone) {
        self.init(sink: sink, timeZone: timeZone, app: nil)
    }

    /// A reader of posts from the paired app `app`.
    public init(sink: ImportSink, timeZone: TimeZone, app: String?) {
        self.sink = sink
        self.timeZone = timeZone
        self.app = app
    }

    func importJSON(_ input: ImportInput) throws {
        let path = input.name
        let tooLarge = ImportError.unreadable(path: path, reason: "larger than \(Self.maxBytes >> 20) MiB; split it")
        guard (input.size ?? 0) <= Int64(Self.maxBytes) else { throw tooLarge }
        var data = Data()
        do {
            try input.read { chunk in
                guard data.count + chunk.count <= Self.maxBytes else { throw tooLarge }
                data.append(chunk)
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError.unreadable(path: path, reason: "\(error.localizedDescription)")
        }
        try importBody(data, name: path)
    }

    /// Reads one JSON document (a file's bytes or a request's body) into the sink. Throws, having
    /// passed nothing on, when it is not JSON or in neither shape.
    public func importBody(_ data: Data, name path: String) throws {
        enum Shape {
            case yappi([Post])
            case autoExport(AutoExport.Body)
        }
        let shape: Shape
        do {
            let decoder = JSONDecoder()
            if let posts = Self.yappiPosts(data) {
                // What a phone posts, read without Codable (`JSONPullReader` says why). Any body
                // it does not read as Yappi's exactly as the decoder below would goes there.
                shape = .yappi(posts)
            } else if let many = try? decoder.decode([Post].self, from: data) {
                shape = .yappi(many)
            } else if let one = try? decoder.decode(Post.self, from: data) {
                shape = .yappi([one])
            } else {
                shape = .autoExport(try decoder.decode(AutoExport.self, from: data).data)
            }
        } catch DecodingError.dataCorrupted {
            let (location, reason) = Self.diagnose(data)
            throw ImportError.notWellFormed(path: path, location: location, message: "not valid JSON" + reason)
        } catch {
            throw ImportError.notAnExport(path: path, reason: "expected {\"metric\":…,\"data\":[…]} (or an array of them) or {\"data\":{\"metrics\":[…]}}")
        }
        var rejections = Rejections(sink: sink)
        switch shape {
        case .yappi(let posts): try importYappi(posts, rejections: &rejections)
        case .autoExport(let body): try importAutoExport(body, rejections: &rejections)
        }
        rejections.warn()
    }

    /// Rejections by reason, with where the first of each was, for the report's warnings.
    struct Rejections {
        let sink: ImportSink
        var tally: [String: (count: Int, first: String)] = [:]

        mutating func reject(_ reason: String, _ place: String) {
            tally[reason] = tally[reason].map { ($0.count + 1, $0.first) } ?? (1, place)
            sink.reject(1)
        }

        func warn() {
            for (reason, t) in tally.sorted(by: { $0.key < $1.key }) {
                sink.warn("\(t.count) entr\(t.count == 1 ? "y" : "ies") rejected: \(reason) (first at \(t.first))")
            }
        }
    }

    /// The HealthKit quantity type a metric name (Yappi's `STEPS`, Health Auto Export's
    /// `step_count`, a short name, an identifier) stands for; nil when none.
    public static func quantityTypeIdentifier(_ name: String) -> String? {
        if case .success(let known) = quantityType(name), known.type.hasPrefix("HKQuantityTypeIdentifier") { return known.type }
        return nil
    }

    /// The type and unit a metric name stands for, or why its entries are rejected.
    static func quantityType(_ name: String) -> Result<(type: String, unit: String), RejectedMetric> {
        switch TypeNames.resolve(AutoExport.metricAliases[name] ?? name) {
        case .known(let identifier, let implied) where identifier.hasPrefix("HKQuantityTypeIdentifier"):
            return .success((identifier, implied ?? ""))
        case .known:
            // A category type (sleep stages, symptoms) has no number to post.
            return .failure(RejectedMetric(reason: "a number for a type that takes a category value"))
        case .other(let name):
            return .success((name, ""))
        case .refused(let category, let closest):
            return .failure(RejectedMetric(reason: "a metric name this build does not know that reads as \(category.rawValue) data (the closest known is \(closest))"))
        }
    }

    struct RejectedMetric: Error {
        var reason: String
    }

    private func importYappi(_ posts: [Post], rejections: inout Rejections) throws {
        let source = app.map { HealthSource(name: $0, device: HealthDevice(name: $0, model: "iPhone")) }
            ?? HealthSource(name: "Companion app", version: nil, device: HealthDevice(model: "iPhone"))
        for (p, post) in posts.enumerated() {
            let resolution = Self.quantityType(post.metric)
            // Worked out once a post, not for each of its entries (2 % of the server's CPU).
            let cumulative = (try? resolution.get()).map { Self.isCumulative($0.type) } ?? false
            for (i, entry) in post.data.enumerated() {
                // Named only for a rejection: building it for every entry cost more than the entry.
                func place() -> String { posts.count > 1 ? "[\(p)].data[\(i)]" : "data[\(i)]" }
                let type: String, unit: String
                switch resolution {
                case .success(let known): (type, unit) = known
                case .failure(let rejected):
                    rejections.reject(rejected.reason, place())
                    continue
                }
                // The slash found among the bytes: `firstIndex(of:)` on the string walked its
                // characters (3 % of the server's CPU).
                guard let range = entry.timeRange, let slash = range.utf8.firstIndex(of: UInt8(ascii: "/")),
                      let start = LocalTime.parse(range[..<slash], timeZone: timeZone),
                      let end = LocalTime.parse(range[range.utf8.index(after: slash)...], timeZone: timeZone) else {
                    rejections.reject("unparseable timeRange", place())
                    continue
                }
                try emit(type: type, unit: unit, start: start, end: end, number: entry.value?.number, source: source, place: place(),
                         rejections: &rejections, cumulative: cumulative)
            }
        }
    }

    private func importAutoExport(_ body: AutoExport.Body, rejections: inout Rejections) throws {
        for (m, metric) in (body.metrics ?? []).enumerated() {
            // Shapes of their own: sleep (stages or a night's totals) and blood pressure (two values).
            switch TypeNames.normalized(metric.name) {
            case "sleepanalysis", "sleep":
                try importAutoExportSleep(metric, index: m, rejections: &rejections)
                continue
            case "bloodpressure":
                try importAutoExportBloodPressure(metric, index: m, rejections: &rejections)
                continue
            default:
                break
            }
            let resolution = Self.quantityType(metric.name)
            let conversion = metric.units.flatMap { UnitNormalizer.canonical(for: AutoExport.unitAliases[$0] ?? $0) }
            for (i, point) in metric.data.enumerated() {
                let place = "data.metrics[\(m)].data[\(i)]"
                var (type, unit): (String, String)
                switch resolution {
                case .success(let known): (type, unit) = known
                case .failure(let rejected):
                    rejections.reject(rejected.reason, place)
                    continue
                }
                if let conversion, unit.isEmpty || unit == conversion.unit { unit = conversion.unit }
                guard let text = point.date, let date = LocalTime.parseAny(Substring(text), timeZone: timeZone) else {
                    rejections.reject("unparseable date", place)
                    continue
                }
                let converted = { (n: CompanionJSONImporter.LenientNumber?) in
                    n?.number.map { value in conversion.map { $0.factor.applied(to: value) } ?? value }
                }
                // An averaged point (heart rate) keeps its minimum and maximum beside the average.
                let range = [("Min", converted(point.Min)), ("Max", converted(point.Max))].compactMap { key, value in
                    value.map { MetadataEntry(key: key, value: $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : String($0)) }
                }
                try emit(type: type, unit: unit, start: date, end: date, number: converted(point.qty ?? point.Avg), source: autoExportSource(point.source),
                         place: place, rejections: &rejections, metadata: point.qty == nil ? range : [])
            }
        }
        for (w, workout) in (body.workouts ?? []).enumerated() {
            let place = "data.workouts[\(w)]"
            guard let startText = workout.start, let endText = workout.end,
                  let start = LocalTime.parseAny(Substring(startText), timeZone: timeZone),
                  let end = LocalTime.parseAny(Substring(endText), timeZone: timeZone) else {
                rejections.reject("unparseable start or end", place)
                continue
            }
            guard AppleHealthHandler.plausible(start), AppleHealthHandler.plausible(end) else { rejections.reject("date out of range", place); continue }
            guard end.seconds >= start.seconds else { rejections.reject("ends before it starts", place); continue }
            func quantity(_ q: AutoExport.Quantity?) -> DecimalValue? {
                guard let q, let value = q.qty?.number, value.isFinite, value >= 0 else { return nil }
                guard let units = q.units, let conversion = UnitNormalizer.canonical(for: AutoExport.unitAliases[units] ?? units) else {
                    return DecimalValue(double: value)
                }
                return DecimalValue(double: conversion.factor.applied(to: value))
            }
            // Without `duration` (the app's first format), the span is the workout's time.
            let minutes = workout.duration?.number.flatMap { $0.isFinite && $0 >= 0 ? DecimalValue(double: $0 / 60) : nil }
                ?? DecimalValue(double: Double(end.seconds - start.seconds) / 60)
            try sink.emit(.workout(Workout(
                activityType: AutoExport.activityType(workout.name ?? ""), source: autoExportSource(nil), start: start, end: end,
                duration: minutes, totalDistance: quantity(workout.distance), totalEnergy: quantity(workout.activeEnergyBurned ?? workout.activeEnergy))))
            // Heart rate during it, as samples of their own.
            for (h, point) in (workout.heartRateData ?? []).enumerated() {
                let place = "\(place).heartRateData[\(h)]"
                guard let text = point.date, let date = LocalTime.parseAny(Substring(text), timeZone: timeZone) else {
                    rejections.reject("unparseable date", place)
                    continue
                }
                try emit(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", start: date, end: date, number: (point.qty ?? point.Avg)?.number,
                         source: autoExportSource(point.source), place: place, rejections: &rejections)
            }
            // A v2 workout's route: its points, as a route file's would be.
            if let route = workout.route, !route.isEmpty {
                var points: [RoutePoint] = []
                var skipped = 0
                for point in route.prefix(ElementLimits.routePoints) {
                    guard let lat = point.latitude, let lon = point.longitude, abs(lat) <= 90, abs(lon) <= 180,
                          let text = point.timestamp, let time = LocalTime.parseAny(Substring(text), timeZone: timeZone) else {
                        skipped += 1
                        continue
                    }
                    points.append(RoutePoint(time: time.seconds, latitude: lat, longitude: lon,
                                             altitude: point.altitude.flatMap(RoutePoint.plausible(altitude:)),
                                             speed: point.speed.flatMap(RoutePoint.plausible(speed:)), course: point.course,
                                             horizontalAccuracy: point.horizontalAccuracy, verticalAccuracy: point.verticalAccuracy))
                }
                skipped += max(0, route.count - ElementLimits.routePoints)
                if skipped > 0 { sink.warn("\(skipped) route point(s) without a readable position or time skipped in \(place).route") }
                if !points.isEmpty { try sink.emit(.route(WorkoutRoute(workoutStart: start, filePath: place + ".route", points: points))) }
            }
        }
    }

    /// `sleep_analysis`: a stage a point (`startDate`, `endDate`, `value` "Core"), or a night's
    /// totals in hours (`sleepStart`, `sleepEnd`, `asleep`, `core`, `deep`, `rem`, `awake`, and
    /// `inBedStart`, `inBedEnd`, `inBed`). The totals carry no times of their own: the night's
    /// stages are placed one after another from `sleepStart` (deep, core, REM, the rest of
    /// `asleep`, then awake), so each night's minutes by stage are the app's, and marked so
    /// (metadata `HealthAutoExportPlacement`); the time in bed is its own span.
    private func importAutoExportSleep(_ metric: AutoExport.Metric, index m: Int, rejections: inout Rejections) throws {
        let type = "HKCategoryTypeIdentifierSleepAnalysis"
        func time(_ text: String?) -> HealthTimestamp? { text.flatMap { LocalTime.parseAny(Substring($0), timeZone: timeZone) } }
        for (i, point) in metric.data.enumerated() {
            let place = "data.metrics[\(m)].data[\(i)]"
            let source = autoExportSource(point.sleepSource ?? point.source)
            if let stage = point.value {
                guard let value = AutoExport.sleepValue(stage) else { rejections.reject("unknown sleep stage", place); continue }
                guard let start = time(point.startDate ?? point.date), let end = time(point.endDate) else {
                    rejections.reject("unparseable startDate or endDate", place)
                    continue
                }
                try emitCategory(type: type, value: value, start: start, end: end, source: source, place: place, rejections: &rejections)
                continue
            }
            guard let sleepStart = time(point.sleepStart ?? point.inBedStart), let sleepEnd = time(point.sleepEnd ?? point.inBedEnd) else {
                rejections.reject("a sleep entry with neither a stage (startDate, endDate, value) nor sleepStart and sleepEnd", place)
                continue
            }
            var emitted = 0
            func hours(_ n: CompanionJSONImporter.LenientNumber?) -> Double { n?.number.map { $0.isFinite ? max($0, 0) : 0 } ?? 0 }
            let placement = [MetadataEntry(key: "HealthAutoExportPlacement", value: "night totals placed in order from sleepStart")]
            let bedSource = autoExportSource(point.inBedSource ?? point.source)
            if let bedStart = time(point.inBedStart), let bedEnd = time(point.inBedEnd), bedEnd.seconds > bedStart.seconds {
                try emitCategory(type: type, value: "HKCategoryValueSleepAnalysisInBed", start: bedStart, end: bedEnd, source: bedSource,
                                 place: place, rejections: &rejections)
                emitted += 1
            } else if (hours(point.inBed) * 3600).rounded() >= 60 {
                // Hours in bed without their times: from sleepStart, marked as placed.
                let end = HealthTimestamp(seconds: sleepStart.seconds + Int64((hours(point.inBed) * 3600).rounded()), utcOffset: sleepEnd.utcOffset)
                try emitCategory(type: type, value: "HKCategoryValueSleepAnalysisInBed", start: sleepStart, end: end, source: bedSource,
                                 place: place, rejections: &rejections, metadata: placement)
                emitted += 1
            }
            let staged = hours(point.deep) + hours(point.core) + hours(point.rem)
            let parts: [(Double, String)] = [
                (hours(point.deep), "HKCategoryValueSleepAnalysisAsleepDeep"), (hours(point.core), "HKCategoryValueSleepAnalysisAsleepCore"),
                (hours(point.rem), "HKCategoryValueSleepAnalysisAsleepREM"),
                (max(hours(point.asleep) - staged, 0), "HKCategoryValueSleepAnalysisAsleepUnspecified"),
                (hours(point.awake), "HKCategoryValueSleepAnalysisAwake"),
            ]
            var at = sleepStart
            for (h, value) in parts where (h * 3600).rounded() >= 60 {
                let end = HealthTimestamp(seconds: at.seconds + Int64((h * 3600).rounded()), utcOffset: sleepEnd.utcOffset)
                try emitCategory(type: type, value: value, start: at, end: end, source: source, place: place, rejections: &rejections,
                                 metadata: placement)
                at = end
                emitted += 1
            }
            if emitted == 0 { rejections.reject("a sleep entry with no hours in any stage", place) }
        }
    }

    /// `blood_pressure`: `systolic` and `diastolic` (mmHg) at `date`, kept as HealthKit keeps a
    /// reading, two samples.
    private func importAutoExportBloodPressure(_ metric: AutoExport.Metric, index m: Int, rejections: inout Rejections) throws {
        for (i, point) in metric.data.enumerated() {
            let place = "data.metrics[\(m)].data[\(i)]"
            guard let text = point.date, let date = LocalTime.parseAny(Substring(text), timeZone: timeZone) else {
                rejections.reject("unparseable date", place)
                continue
            }
            guard let systolic = point.systolic?.number, let diastolic = point.diastolic?.number else {
                rejections.reject("a blood pressure without systolic and diastolic", place)
                continue
            }
            let source = autoExportSource(point.source)
            try emit(type: "HKQuantityTypeIdentifierBloodPressureSystolic", unit: "mmHg", start: date, end: date, number: systolic,
                     source: source, place: place, rejections: &rejections)
            try emit(type: "HKQuantityTypeIdentifierBloodPressureDiastolic", unit: "mmHg", start: date, end: date, number: diastolic,
                     source: source, place: place, rejections: &rejections)
        }
    }

    /// Checks a category sample's times and passes it on.
    private func emitCategory(type: String, value: String, start: HealthTimestamp, end: HealthTimestamp, source: HealthSource,
                              place: String, rejections: inout Rejections, metadata: [MetadataEntry] = []) throws {
        guard AppleHealthHandler.plausible(start), AppleHealthHandler.plausible(end) else { rejections.reject("date out of range", place); return }
        guard end.seconds >= start.seconds else { rejections.reject("ends before it starts", place); return }
        try sink.emit(.sample(HealthSample(type: type, source: source, start: start, end: end, value: .category(value), metadata: metadata)))
    }

    /// A Health Auto Export point's source: the device it names, through the paired app.
    private func autoExportSource(_ name: String?) -> HealthSource {
        let named = name.flatMap { $0.isEmpty ? nil : $0 }
        let model = named.map { $0.localizedCaseInsensitiveContains("watch") ? "Watch" : "iPhone" } ?? "iPhone"
        return HealthSource(name: named ?? app ?? "Companion app", device: HealthDevice(name: app ?? "Health Auto Export", model: model))
    }

    /// Checks an entry and passes its sample on.
    /// - Parameter cumulative: `isCumulative(type)`, when the caller has it.
    private func emit(type: String, unit: String, start: HealthTimestamp, end: HealthTimestamp, number: Double?, source: HealthSource,
                      place: @autoclosure () -> String, rejections: inout Rejections, metadata: [MetadataEntry] = [],
                      cumulative: Bool? = nil) throws {
        guard AppleHealthHandler.plausible(start), AppleHealthHandler.plausible(end) else { rejections.reject("date out of range", place()); return }
        guard end.seconds >= start.seconds else { rejections.reject("ends before it starts", place()); return }
        guard let number, number.isFinite else {
            rejections.reject("unparseable value", place())
            return
        }
        if let refusal = AppleHealthHandler.refusal(of: number, cumulative: cumulative ?? Self.isCumulative(type)) {
            rejections.reject(refusal.rawValue, place())
            return
        }
        let value = number == number.rounded() && abs(number) < 1e15
            ? DecimalValue(mantissa: Int64(number), scale: 0) : DecimalValue(double: number)
        try sink.emit(.sample(HealthSample(type: type, source: source, start: start, end: end, value: .quantity(value, unit: unit), metadata: metadata)))
    }

    /// Whether samples of `type` add up (steps) rather than average (heart rate): a HealthKit type's
    /// aggregation style.
    static func isCumulative(_ type: String) -> Bool {
        type.hasPrefix("HKQuantityTypeIdentifier") && AggregationStyle.of(type: type) == .cumulative
    }

    /// The Yappi posts of `data` (one, or an array of them), read as `JSONDecoder` reads `Post`;
    /// nil when it is not JSON (`JSONPullReader`'s rules), not that shape, or holds what only
    /// the decoder should judge (a key of a post or entry twice): the caller decodes it then.
    static func yappiPosts(_ data: Data) -> [Post]? {
        data.withUnsafeBytes { raw -> [Post]? in
            var reader = JSONPullReader(raw)
            do {
                var posts: [Post] = []
                switch try reader.peek() {
                case .array:
                    try reader.beginArray()
                    while try reader.nextElement() {
                        guard let post = try readPost(&reader) else { return nil }
                        posts.append(post)
                    }
                case .object:
                    guard let post = try readPost(&reader) else { return nil }
                    posts.append(post)
                default:
                    return nil
                }
                try reader.end()
                return posts
            } catch {
                return nil
            }
        }
    }

    /// A post object, or nil when `Post`'s decoding would fail or judge differently.
    private static func readPost(_ reader: inout JSONPullReader) throws(JSONPullReader.Malformed) -> Post? {
        guard try reader.peek() == .object else { return nil }
        try reader.beginObject()
        var metric: String?, data: [Entry]?
        while let key = try reader.nextKey() {
            switch key {
            case "metric":
                guard metric == nil, try reader.peek() == .string else { return nil }
                metric = try reader.readString()
            case "data":
                guard data == nil, try reader.peek() == .array else { return nil }
                try reader.beginArray()
                var entries: [Entry] = []
                while try reader.nextElement() {
                    guard let entry = try readEntry(&reader) else { return nil }
                    entries.append(entry)
                }
                data = entries
            default:
                try reader.skipValue()
            }
        }
        guard let metric, let data else { return nil }
        return Post(metric: metric, data: data)
    }

    /// An entry object as `Entry` decodes it: `timeRange` a string or absent (null too), `value`
    /// a number or, whatever else it is, no number.
    private static func readEntry(_ reader: inout JSONPullReader) throws(JSONPullReader.Malformed) -> Entry? {
        guard try reader.peek() == .object else { return nil }
        try reader.beginObject()
        var entry = Entry()
        var seenRange = false, seenValue = false
        while let key = try reader.nextKey() {
            switch key {
            case "timeRange":
                guard !seenRange else { return nil }
                seenRange = true
                switch try reader.peek() {
                case .string: entry.timeRange = try reader.readString()
                case .null: try reader.readLiteral()
                default: return nil
                }
            case "value":
                guard !seenValue else { return nil }
                seenValue = true
                switch try reader.peek() {
                case .number: entry.value = LenientNumber(number: try reader.readNumber())
                case .null: try reader.readLiteral()
                default:
                    try reader.skipValue()
                    entry.value = LenientNumber(number: nil)
                }
            default:
                try reader.skipValue()
            }
        }
        return entry
    }

    struct Post: Decodable {
        var metric: String
        var data: [Entry]
    }

    /// Fields are read leniently so that one bad entry is rejected alone, not the whole post.
    struct Entry: Decodable {
        var timeRange: String?
        var value: LenientNumber?

        init(timeRange: String? = nil, value: LenientNumber? = nil) {
            self.timeRange = timeRange
            self.value = value
        }
    }

    /// A JSON number, or nil for anything else (strings, booleans, null).
    struct LenientNumber: Decodable {
        var number: Double?

        init(number: Double?) {
            self.number = number
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if (try? container.decode(Bool.self)) != nil { number = nil } else { number = try? container.decode(Double.self) }
        }
    }

    /// Where and why `data` is not JSON. The decoder says neither, so the parser is asked again,
    /// and its known phrases ("Invalid value", "Unexpected end of file", "Too many nested arrays
    /// or dictionaries") are passed on, never a byte of the input.
    static func diagnose(_ data: Data) -> (SourceLocation, String) {
        let detail: String
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return (SourceLocation(line: 1, column: 1), "")
        } catch {
            detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        }
        var location = SourceLocation(line: 1, column: 1)
        if let r = detail.range(of: #"character \d+"#, options: .regularExpression), let offset = Int(detail[r].dropFirst(10)) {
            location = Self.location(ofByte: offset, in: data)
        } else if detail.hasPrefix("Unexpected end of file") {
            location = Self.location(ofByte: data.count, in: data)
        }
        // Only the parser's known phrases are repeated: others may quote the input ("Number 1e400
        // is not representable").
        let known = ["Unexpected end of file", "Too many nested arrays or dictionaries", "Invalid value",
                     "Invalid escape sequence", "Unexpected character", "Invalid UTF-8", "Badly formed object",
                     "Badly formed array", "Number", "Garbage at end"]
        guard let phrase = known.first(where: { detail.hasPrefix($0) }) else { return (location, "") }
        return (location, ": " + (phrase == "Number" ? "a number out of range" : phrase))
    }

    /// Line and column (1-based, in bytes) of byte `offset` of `data`.
    static func location(ofByte offset: Int, in data: Data) -> SourceLocation {
        var line = 1, lineStart = 0
        for (index, byte) in data.prefix(offset).enumerated() where byte == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return SourceLocation(line: line, column: min(offset, data.count) - lineStart + 1)
    }
}
