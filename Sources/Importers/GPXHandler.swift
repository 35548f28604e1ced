import Foundation
import HealthModel

/// Reads the track points of a workout route file (GPX 1.1 as Apple writes it): position,
/// elevation, time, and Apple's speed, course and accuracy extensions; and of a track another app
/// wrote (Garmin Connect, Strava): the file's creator, the track's type, and heart rate and
/// cadence from Garmin's TrackPointExtension (`gpxtpx:hr`, `gpxtpx:cad`, any prefix).
struct GPXHandler: XMLTokenHandler {
    private(set) var points: [RoutePoint] = []
    /// `<gpx creator="...">` and the first track's `<type>`, when given.
    private(set) var creator: String?
    private(set) var trackType: String?
    /// Heart rate (bpm) and cadence (rpm) of points, by the point's time.
    private(set) var heartRates: [(time: Int64, value: Double)] = []
    private(set) var cadences: [(time: Int64, value: Double)] = []
    private var pointHeartRate: Double?
    private var pointCadence: Double?
    private var inTrack = false
    /// Points left out because their position or time could not be read.
    private(set) var skipped = 0
    private var current: RoutePoint?
    private var currentValid = false
    private var field: Field?

    private enum Field { case elevation, time, speed, course, horizontalAccuracy, verticalAccuracy, heartRate, cadence, type }

    mutating func startElement(name: UnsafeRawBufferPointer, attributes: [XMLAttribute], bytes: UnsafeRawBufferPointer, tokenizer: borrowing XMLLocator) throws {
        if eq(name, "gpx") {
            creator = Tag(bytes: bytes, attributes: attributes).value("creator").map { String(decoding: $0, as: UTF8.self) }
            return
        }
        if eq(name, "trk") { inTrack = true }
        if inTrack, current == nil, eq(name, "type"), trackType == nil {
            field = .type
            return
        }
        if eq(name, "trkpt") {
            let tag = Tag(bytes: bytes, attributes: attributes)
            let lat = tag.value("lat").flatMap { DecimalValue.parse($0) }?.double
            let lon = tag.value("lon").flatMap { DecimalValue.parse($0) }?.double
            currentValid = lat.map { abs($0) <= 90 } == true && lon.map { abs($0) <= 180 } == true
            current = RoutePoint(time: 0, latitude: lat ?? 0, longitude: lon ?? 0)
            return
        }
        guard current != nil else { return }
        let local = localName(name)
        if eq(local, "hr") { field = .heartRate; return }
        if eq(local, "cad") { field = .cadence; return }
        if eq(name, "ele") { field = .elevation } else if eq(name, "time") { field = .time } else if eq(name, "speed") { field = .speed } else if eq(name, "course") { field = .course } else if eq(name, "hAcc") { field = .horizontalAccuracy } else if eq(name, "vAcc") { field = .verticalAccuracy } else { field = nil }
    }

    mutating func endElement(name: UnsafeRawBufferPointer) throws {
        field = nil
        if eq(name, "trk") { inTrack = false }
        if eq(name, "trkpt"), let point = current {
            if currentValid && point.time != 0 && points.count < ElementLimits.routePoints {
                points.append(point)
                if let hr = pointHeartRate { heartRates.append((point.time, hr)) }
                if let cad = pointCadence { cadences.append((point.time, cad)) }
            } else {
                skipped += 1
            }
            current = nil
            pointHeartRate = nil
            pointCadence = nil
        }
    }

    mutating func text(_ bytes: UnsafeRawBufferPointer) throws {
        if field == .type, current == nil {
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { trackType = (trackType ?? "") + text }
            return
        }
        guard let field, current != nil else { return }
        var start = 0, end = bytes.count
        while start < end, XMLTokenizer.isSpace(bytes[start]) { start += 1 }
        while end > start, XMLTokenizer.isSpace(bytes[end - 1]) { end -= 1 }
        let trimmed = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        if field == .time {
            if let t = HealthTimestamp.parseISO8601(trimmed) { current!.time = t.seconds } else { currentValid = false }
            return
        }
        guard let value = DecimalValue.parse(trimmed)?.double else { return }
        // Values outside what a phone can measure are dropped, not stored.
        switch field {
        case .elevation: current!.altitude = RoutePoint.plausible(altitude: value)
        case .speed: current!.speed = RoutePoint.plausible(speed: value)
        case .course: current!.course = RoutePoint.plausible(course: value)
        case .horizontalAccuracy: current!.horizontalAccuracy = RoutePoint.plausible(accuracy: value)
        case .verticalAccuracy: current!.verticalAccuracy = RoutePoint.plausible(accuracy: value)
        // A heart rate or cadence a body cannot have is no reading.
        case .heartRate: pointHeartRate = (20...250).contains(value) ? value : nil
        case .cadence: pointCadence = (0...300).contains(value) ? value : nil
        case .time, .type: break
        }
    }
}
