import Foundation
import HealthModel
import VaultEvents

/// A FIT file (Garmin, Wahoo, Coros: docs/fit.md) into the vault's events. Activity files give one
/// workout per session (its laps as lap events, its heart rate as statistics), the session's
/// positions as a route, and its records' heart rate, power, cadence and speed as samples; weight
/// scale files give body mass, body fat and BMI. The device (maker and product number) is the
/// source; its serial number is never kept. Times are FIT's UTC seconds, placed in the local
/// offset the file records (the activity's local timestamp), else in the import's time zone.
struct FITImporter {
    let sink: ImportSink
    let timeZone: TimeZone

    /// FIT files are small (a long ride is a few MB); more than this is not one.
    static let maximumSize = 256 << 20

    func importFIT(_ input: ImportInput) throws {
        var bytes: [UInt8] = []
        try input.read { chunk in
            guard bytes.count + chunk.count <= Self.maximumSize else {
                throw ImportError.unreadable(path: input.name, reason: "over \(Self.maximumSize >> 20) MiB: not a FIT file of one device")
            }
            bytes += chunk
        }
        let summary: FITDecoder.Summary
        do {
            // A chained file without a file_id continues the one before it: a watch appends the
            // heart rate a strap stored during a swim as such files after the activity's.
            var held: [FITMessage]?
            summary = try FITDecoder.decode(bytes) { messages in
                if held != nil, !messages.contains(where: { $0.global == 0 }) {
                    held! += messages
                    return
                }
                if let previous = held { try importFile(previous, name: input.name) }
                held = messages
            }
            if let last = held { try importFile(last, name: input.name) }
        } catch let damage as FITDecoder.Damage {
            throw ImportError.damagedFIT(path: input.name, offset: damage.offset, reason: damage.reason)
        }
        if let damage = summary.damage {
            sink.warn("the bytes after the \(summary.files) whole FIT file(s) were not read (byte \(damage.offset): \(damage.reason))")
        }
    }

    /// One FIT file's messages (of a chain: each file on its own).
    func importFile(_ messages: [FITMessage], name: String) throws {
        let fileID = messages.first { $0.global == 0 }
        let source = Self.source(fileID)
        // The local offset the device recorded: activity.local_timestamp − timestamp.
        let stamp = clock(recorded: Self.recordedOffset(messages.first { $0.global == 34 }, localTimestamp: 5))
        // Times below 0x10000000 count from the device's start, not from the FIT epoch: no date.
        if let first = messages.first(where: { $0.timestamp != nil })?.timestamp, first < 0x1000_0000 {
            let count = messages.filter { [18, 20, 30, 55].contains($0.global) }.count
            sink.reject(count)
            sink.warn("\(count) message(s) rejected: \((name as NSString).lastPathComponent)'s times count from the device's start, not a date")
            return
        }
        var kept = 0
        let sessions = messages.filter { $0.global == 18 }
        let laps = messages.filter { $0.global == 19 }
        var records = messages.filter { $0.global == 20 }
        if messages.contains(where: { $0.global == FITStoredHeartRate.global }) {
            if let readings = FITStoredHeartRate.readings(messages) {
                FITStoredHeartRate.merge(readings, into: &records)
            } else {
                sink.warn("\((name as NSString).lastPathComponent): the heart rate a strap stored (hr messages) could not be placed in time and was not read")
            }
        }
        var taken = [Bool](repeating: false, count: records.count)
        /// The records from `start` to `end` not taken by an earlier session: a record on the
        /// boundary of two sessions (a multisport leg's end, the next one's start) is the
        /// earlier one's, so that each record gives its samples once.
        func take(from start: Int64, to end: Int64) -> [FITMessage] {
            var inside: [FITMessage] = []
            for (i, record) in records.enumerated() where !taken[i] {
                guard let time = record.date(253), time >= start, time <= end else { continue }
                inside.append(record)
                taken[i] = true
            }
            return inside
        }
        for (index, session) in sessions.enumerated() {
            guard let start = session.date(2), let elapsed = session.value(7, scale: 1000) ?? session.value(8, scale: 1000) else {
                sink.reject(1)
                sink.warn("1 FIT session rejected: no start or length")
                continue
            }
            // The session's own timestamp is its end (records run to it); its elapsed time when that is missing.
            let end = max(start + Int64(elapsed.rounded()), session.date(253) ?? start)
            let type = FITSports.activityType(sport: session.integer(5), subSport: session.integer(6))
            var workout = Workout(activityType: type, source: source, start: stamp(start), end: stamp(end),
                                  duration: session.value(8, scale: 1000).map { DecimalValue(double: $0 / 60) },
                                  totalDistance: session.value(9, scale: 100).map { DecimalValue(double: $0) },
                                  totalEnergy: session.value(11).map { DecimalValue(double: $0) })
            workout.events = laps.compactMap { lap in
                guard let lapStart = lap.date(2), lapStart >= start, lapStart <= end else { return nil }
                return WorkoutEvent(type: "HKWorkoutEventTypeLap", date: stamp(lapStart),
                                    duration: lap.value(7, scale: 1000).map { DecimalValue(double: $0 / 60) })
            }
            if session.integer(16) != nil || session.integer(17) != nil {
                workout.statistics = [WorkoutStatistic(type: "HKQuantityTypeIdentifierHeartRate", start: stamp(start), end: stamp(end),
                                                       average: session.value(16).map { DecimalValue(double: $0) },
                                                       maximum: session.value(17).map { DecimalValue(double: $0) }, unit: "count/min")]
            }
            kept += try emit(workout, records: take(from: start, to: end), sport: session.integer(5),
                             routeName: "fit-\(start)" + (sessions.count > 1 ? "-\(index + 1)" : ""), source: source, stamp: stamp)
        }
        // Records no session holds. A file of records without any session (a recording the
        // device closed without its summary: a flat battery, a crash) is the workout they
        // span, of the sport its sport message names; records outside the sessions of a file
        // that has some give their samples.
        let left = records.indices.filter { !taken[$0] && records[$0].date(253) != nil }.map { records[$0] }
        if sessions.isEmpty, let first = left.first?.date(253), let last = left.last?.date(253) {
            let sport = messages.first { $0.global == 12 }
            let type = FITSports.activityType(sport: sport?.integer(0), subSport: sport?.integer(1))
            let distance = left.last { $0.value(5) != nil }?.value(5, scale: 100)
            let workout = Workout(activityType: type, source: source, start: stamp(first), end: stamp(last),
                                  duration: DecimalValue(double: Double(last - first) / 60),
                                  totalDistance: distance.map { DecimalValue(double: $0) }, totalEnergy: nil)
            kept += try emit(workout, records: left, sport: sport?.integer(0), routeName: "fit-\(first)", source: source, stamp: stamp)
            sink.warn("\((name as NSString).lastPathComponent): no session summary; its \(left.count) record(s) became a workout from the first to the last")
        } else {
            try Self.forEachSample(left, sport: nil, source: source, stamp: stamp) { sample in
                try sink.emit(sample: sample)
                kept += 1
            }
        }
        kept += try importWeighings(messages.filter { $0.global == 30 }, source: source, stamp: stamp, name: name)
        kept += try importMonitoring(messages, source: source)
        kept += try importSleep(messages, source: source)
        let other = messages.filter { ![0, 18, 19, 20, 30, 34, 55, 103, FITSleep.global].contains($0.global) }
        let untimed = records.count { $0.date(253) == nil }
        if untimed > 0 {
            // A record without its timestamp field cannot be placed in time (the SDK reads them with none).
            sink.warn("\((name as NSString).lastPathComponent): \(untimed) record(s) without a time (no timestamp field): not kept")
        } else if kept == 0, !other.isEmpty, sessions.isEmpty, !messages.contains(where: { $0.global == FITSleep.global }) {
            sink.warn("\((name as NSString).lastPathComponent): no activity or weighing in it (a settings, course or workout plan file)")
        }
    }

    /// A workout, its route (the records' positions) and its records' samples; returns the events
    /// emitted. The route is named by what it is, not by the file: the same file copied under
    /// another name (twice off the device, or from two folders) is the same route and workout,
    /// and adds nothing.
    private func emit(_ workout: Workout, records: [FITMessage], sport: Int64?, routeName: String, source: HealthSource,
                      stamp: (Int64) -> HealthTimestamp) throws -> Int {
        var workout = workout
        let points = records.compactMap { record -> RoutePoint? in
            guard let time = record.date(253), let latitude = record.degrees(0), let longitude = record.degrees(1),
                  abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
            return RoutePoint(time: time, latitude: latitude, longitude: longitude,
                              altitude: record.value(78, scale: 5, offset: 500) ?? record.value(2, scale: 5, offset: 500),
                              speed: record.value(73, scale: 1000) ?? record.value(6, scale: 1000))
        }
        if !points.isEmpty {
            workout.routes = [WorkoutRouteReference(source: source, start: workout.start, end: workout.end, filePath: routeName)]
        }
        try sink.emit(.workout(workout))
        var emitted = 1
        if !points.isEmpty {
            try sink.emit(.route(WorkoutRoute(workoutStart: workout.start, filePath: routeName, points: points)))
        }
        try Self.forEachSample(records, sport: sport, source: source, stamp: stamp) { sample in
            try sink.emit(sample: sample)
            emitted += 1
        }
        return emitted
    }

    /// The samples of a session's records, handed to `body` one by one as they are made (an
    /// array of a long ride's samples grew by copying them, measured): heart rate, and by sport
    /// power, cadence and speed.
    static func forEachSample(_ records: [FITMessage], sport: Int64?, source: HealthSource,
                              stamp: (Int64) -> HealthTimestamp, _ body: (consuming HealthSample) throws -> Void) throws {
        let cycling = sport == 2
        let running = sport == 1
        for record in records {
            guard let time = record.date(253) else { continue }
            let at = stamp(time)
            func add(_ type: String, _ value: Double?, _ unit: String) throws {
                guard let value, value.isFinite else { return }
                try body(.reading(type, value, unit: unit, at: at, source: source))
            }
            try add("HKQuantityTypeIdentifierHeartRate", record.value(3), "count/min")
            if cycling {
                try add("HKQuantityTypeIdentifierCyclingPower", record.value(7), "W")
                try add("HKQuantityTypeIdentifierCyclingCadence", record.value(4), "count/min")
                try add("HKQuantityTypeIdentifierCyclingSpeed", record.value(73, scale: 1000) ?? record.value(6, scale: 1000), "m/s")
            } else if running {
                try add("HKQuantityTypeIdentifierRunningPower", record.value(7), "W")
                try add("HKQuantityTypeIdentifierRunningSpeed", record.value(73, scale: 1000) ?? record.value(6, scale: 1000), "m/s")
            }
        }
    }

    /// A scale's weighings: body mass, body fat (a fraction, as HealthKit keeps it) and BMI. A file
    /// of a scale shared by several people (weighings of more than one user profile) is not taken:
    /// the vault cannot tell whose each is.
    func importWeighings(_ weighings: [FITMessage], source: HealthSource, stamp: (Int64) -> HealthTimestamp, name: String) throws -> Int {
        guard !weighings.isEmpty else { return 0 }
        let users = Set(weighings.compactMap { $0.integer(12) })
        guard users.count <= 1 else {
            sink.reject(weighings.count)
            sink.warn("\(weighings.count) weighing(s) rejected: a shared scale's weighings of \(users.count) people (user profiles); the vault cannot tell whose")
            return 0
        }
        var kept = 0
        for weighing in weighings {
            guard let time = weighing.date(253) else { continue }
            let at = stamp(time)
            let values: [(String, Double?, String)] = [
                ("HKQuantityTypeIdentifierBodyMass", weighing.value(0, scale: 100), "kg"),
                ("HKQuantityTypeIdentifierBodyFatPercentage", weighing.value(1, scale: 100).map { $0 / 100 }, "%"),
                ("HKQuantityTypeIdentifierBodyMassIndex", weighing.value(13, scale: 10), "count"),
            ]
            for (type, value, unit) in values {
                guard let value, value.isFinite, value > 0 else { continue }
                try sink.emit(sample: .reading(type, value, unit: unit, at: at, source: source))
                kept += 1
            }
        }
        return kept
    }

    /// A monitoring file's steps, heart rate, resting heart rate and intensity minutes. Steps are counted per activity type (walking,
    /// running) and cumulatively since the local day began, reset each day: each message gives the
    /// increment since the type's previous one as a steps sample over that stretch. A message
    /// holding only the low 16 bits of its time (`timestamp_16`) is placed after the last full one.
    /// The device's daily summaries (1,440 minutes) repeat the day's counts and add nothing but the
    /// day's active calories, kept as one active-energy sample over the local day.
    func importMonitoring(_ messages: [FITMessage], source: HealthSource) throws -> Int {
        guard messages.contains(where: { $0.global == 55 }) else { return 0 }
        // The local offset monitoring_info recorded: its local_timestamp − timestamp.
        let stamp = clock(recorded: Self.recordedOffset(messages.first { $0.global == 103 }, localTimestamp: 0))
        var last: UInt32?
        var previous: [Int64: (time: Int64, steps: Int64)] = [:]
        var dailyCalories: [LocalDay: Double] = [:]
        var kept = 0
        for message in messages {
            if let full = message.timestamp { last = full }
            // The day's resting heart rate (monitoring_hr_data: today's, not the 7-day average).
            if message.global == 211, let time = message.date(253), let resting = message.value(1), resting > 0 {
                try sink.emit(sample: .reading("HKQuantityTypeIdentifierRestingHeartRate", resting, unit: "count/min", at: stamp(time), source: source))
                kept += 1
            }
            guard message.global == 55 else { continue }
            var time = message.timestamp
            if time == nil, let low = message.integer(26), let base = last {
                time = base &+ (UInt32(truncatingIfNeeded: low) &- UInt32(base & 0xFFFF)) & 0xFFFF
                last = time
            }
            guard let raw = time else { continue }
            let seconds = Int64(raw) + FITDecoder.epoch
            if let heartRate = message.value(27), heartRate > 0 {
                try sink.emit(sample: .reading("HKQuantityTypeIdentifierHeartRate", heartRate, unit: "count/min", at: stamp(seconds), source: source))
                kept += 1
            }
            // Intensity minutes: the moderate and vigorous minutes since the previous report, as
            // exercise minutes up to the message's time (the exercise ring counts them,
            // deduplicated by source like every exercise sample).
            let minutes = (message.integer(33) ?? 0) + (message.integer(34) ?? 0)
            if minutes > 0 {
                try sink.emit(sample: HealthSample(type: "HKQuantityTypeIdentifierAppleExerciseTime", source: source,
                                                   start: stamp(seconds - minutes * 60), end: stamp(seconds),
                                                   value: .quantity(DecimalValue(double: Double(minutes)), unit: "min")))
                kept += 1
            }
            // The daily summaries restate the day's counts; their active calories are the day's
            // only energy figure, kept as one active-energy sample over the local day.
            guard message.integer(29) != 1440 else {
                if let calories = message.value(19), calories > 0 {
                    let day = LocalDay(instant: seconds - 1, utcOffset: stamp(seconds - 1).utcOffset)
                    dailyCalories[day, default: 0] += calories
                }
                continue
            }
            let type = message.integer(5) ?? message.integer(24).map { $0 & 0x1F }
            guard let type, type == 1 || type == 6, let steps = message.integer(3) else { continue }
            func day(_ t: Int64) -> LocalDay { LocalDay(instant: t, utcOffset: stamp(t).utcOffset) }
            if let before = previous[type], day(before.time) == day(seconds), steps >= before.steps {
                let increment = steps - before.steps
                if increment > 0, seconds > before.time {
                    try sink.emit(sample: HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: source, start: stamp(before.time),
                                                       end: stamp(seconds), value: .quantity(DecimalValue(double: Double(increment)), unit: "count")))
                    kept += 1
                }
            } else if steps > 0 {
                // The day's first count of this type: its steps since the local day began.
                let from = day(seconds).dayNumber * 86_400 - Int64(stamp(seconds).utcOffset)
                try sink.emit(sample: HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: source, start: stamp(from), end: stamp(seconds),
                                                   value: .quantity(DecimalValue(double: Double(steps)), unit: "count")))
                kept += 1
            }
            previous[type] = (seconds, steps)
        }
        for (day, calories) in dailyCalories.sorted(by: { $0.key < $1.key }) {
            let offset = stamp(day.dayNumber * 86_400).utcOffset
            let start = day.dayNumber * 86_400 - Int64(offset)
            try sink.emit(sample: HealthSample(type: "HKQuantityTypeIdentifierActiveEnergyBurned", source: source,
                                               start: HealthTimestamp(seconds: start, utcOffset: offset),
                                               end: HealthTimestamp(seconds: start + 86_400, utcOffset: offset),
                                               value: .quantity(DecimalValue(double: calories), unit: "kcal")))
            kept += 1
        }
        return kept
    }

    /// A sleep file's levels as sleep-analysis samples (`FITSleep`), in the local offset its
    /// monitoring_info recorded, else the import's time zone.
    func importSleep(_ messages: [FITMessage], source: HealthSource) throws -> Int {
        let spans = FITSleep.spans(messages)
        let levels = messages.filter { $0.global == FITSleep.global }.count
        if spans.isEmpty, levels > 0 {
            sink.warn("\(levels) sleep level(s) read, all awake or unmeasurable: no sleep in them, none kept")
        }
        guard !spans.isEmpty else { return 0 }
        let stamp = clock(recorded: Self.recordedOffset(messages.first { $0.global == 103 }, localTimestamp: 0))
        for span in spans {
            try sink.emit(sample: HealthSample(type: "HKCategoryTypeIdentifierSleepAnalysis", source: source, start: stamp(span.start),
                                               end: stamp(span.end), value: .category(span.value)))
        }
        return spans.count
    }

    /// The offset a message's local-time field (`localTimestamp`) and its timestamp differ by;
    /// nil without either, or when it is more than a time zone can be.
    static func recordedOffset(_ message: FITMessage?, localTimestamp field: UInt8) -> Int32? {
        guard let message, let local = message.integer(field), let at = message.timestamp, abs(local - Int64(at)) <= 18 * 3600 else { return nil }
        return Int32(local - Int64(at))
    }

    /// Seconds since 1970 in the offset the file recorded, else in the import's time zone then.
    func clock(recorded: Int32?) -> (Int64) -> HealthTimestamp {
        let timeZone = self.timeZone
        // Not `recorded ?? ...`: its autoclosure captured the time zone, a retain for every record.
        if let recorded { return { seconds in HealthTimestamp(seconds: seconds, utcOffset: recorded) } }
        return { seconds in
            HealthTimestamp(seconds: seconds, utcOffset: Int32(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds)))))
        }
    }

    /// The device as a source: its maker's name and product number, never its serial number.
    static func source(_ fileID: FITMessage?) -> HealthSource {
        let maker = fileID?.integer(1).map { FITSports.manufacturers[$0] ?? "FIT maker \($0)" } ?? "FIT device"
        let product = fileID?.integer(2).map { " product \($0)" } ?? ""
        return HealthSource(name: maker, device: HealthDevice(manufacturer: maker, model: maker + product))
    }
}
