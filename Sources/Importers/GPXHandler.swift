import HealthModel

/// Reads the track points of a workout route file (GPX 1.1 as Apple writes it): position,
/// elevation, time, and Apple's speed, course and accuracy extensions.
struct GPXHandler: XMLTokenHandler {
    private(set) var points: [RoutePoint] = []
    /// Points left out because their position or time could not be read.
    private(set) var skipped = 0
    private var current: RoutePoint?
    private var currentValid = false
    private var field: Field?

    private enum Field { case elevation, time, speed, course, horizontalAccuracy, verticalAccuracy }

    mutating func startElement(name: UnsafeRawBufferPointer, attributes: [XMLAttribute], bytes: UnsafeRawBufferPointer, tokenizer: borrowing XMLLocator) throws {
        if eq(name, "trkpt") {
            let tag = Tag(bytes: bytes, attributes: attributes)
            let lat = tag.value("lat").flatMap { DecimalValue.parse($0) }?.double
            let lon = tag.value("lon").flatMap { DecimalValue.parse($0) }?.double
            currentValid = lat.map { abs($0) <= 90 } == true && lon.map { abs($0) <= 180 } == true
            current = RoutePoint(time: 0, latitude: lat ?? 0, longitude: lon ?? 0)
            return
        }
        guard current != nil else { return }
        if eq(name, "ele") { field = .elevation } else if eq(name, "time") { field = .time } else if eq(name, "speed") { field = .speed } else if eq(name, "course") { field = .course } else if eq(name, "hAcc") { field = .horizontalAccuracy } else if eq(name, "vAcc") { field = .verticalAccuracy } else { field = nil }
    }

    mutating func endElement(name: UnsafeRawBufferPointer) throws {
        field = nil
        if eq(name, "trkpt"), let point = current {
            if currentValid && point.time != 0 && points.count < ElementLimits.routePoints { points.append(point) } else { skipped += 1 }
            current = nil
        }
    }

    mutating func text(_ bytes: UnsafeRawBufferPointer) throws {
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
        case .time: break
        }
    }
}
