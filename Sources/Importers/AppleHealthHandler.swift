import HealthModel
import VaultEvents
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a single record was left out; the import goes on without it.
enum RejectReason: String, Error, CaseIterable, Sendable {
    case missingType = "missing required attribute type (or workoutActivityType)"
    case missingSource = "missing required attribute sourceName (or iOS 8's source)"
    case missingDates = "missing required attribute startDate or endDate"
    case unparseableDate = "unparseable date"
    case dateOutOfRange = "date out of range"
    case endBeforeStart = "ends before it starts"
    case unparseableValue = "unparseable value"
    case negativeAmount = "negative amount of a quantity that adds up"
    case valueOutOfRange = "value beyond 10^12 in magnitude"
    case malformedReference = "malformed character reference"
    case tooManyChildren = "too many child elements"
}

/// Most children one element may have before the record is rejected: memory stays bounded and
/// every event stays far below the log's frame cap.
enum ElementLimits {
    static let beats = 10_000
    static let routePoints = 200_000
    static let workoutParts = 10_000
    static let attributes = 10_000
}

/// Builds health events from the tokens of an Apple Health `export.xml`.
///
/// Records, workouts (with their events, statistics and route references), activity summaries,
/// correlations, the `Me` characteristics and elements without a model of their own (clinical
/// records, audiograms) become events; a record that cannot be read is rejected alone, with
/// where it starts. Records inside a correlation are passed on marked `nested`: the export lists
/// them at top level too.
struct AppleHealthHandler: XMLTokenHandler {
    var emit: (VaultEvent, _ nested: Bool) throws -> Void
    /// Takes each sample (nearly every record), moved rather than copied into an event; nil:
    /// `emit` takes them, each in an event. A sink, not a closure: a closure taking the sample
    /// `consuming` was called through two reabstraction thunks, each copying it (a sample is
    /// ~150 bytes; copies were a tenth of the parser's thread, measured).
    let sampleSink: (any ImportSink)?
    var reject: (RejectReason, SourceLocation) -> Void
    /// Control characters removed from attribute values.
    private(set) var controlCharactersRemoved = 0

    private enum Element { case healthData, record, workout, workoutRoute, correlation, generic, leaf }
    private var stack: [Element] = []
    private var pool = StringPool(known: Self.literalStrings)
    private var devices: [String: HealthDevice] = [:]
    /// The last few sources read, newest first: the phone's and the watch's records interleave,
    /// and handing out the same instance for each lets the session's and the read models' memos
    /// (`SourceMemo`) find a source by a word.
    private var recentSources: [ParsedSource] = []
    private var dates = ExportDateMemo()
    /// Each unit's canonical form, by the pooled unit string's identity: types interleave, and a
    /// one-entry memo missed on most records, each miss hashing the unit (~1 % of an import).
    private let canonicalUnits = StringMemo<(unit: String, factor: UnitNormalizer.Factor)?>()
    /// Each type's aggregation style, by the pooled type string (working it out per record cut
    /// its short name and hashed it: ~4 % of the parser's thread, measured).
    private let aggregationStyles = StringMemo<AggregationStyle>()
    private var sample: HealthSample?
    /// Whether `sample` holds one, kept beside it: testing the optional itself (`sample != nil`,
    /// `if let`) copied the sample and destroyed the copy through the type's generic witness
    /// (~300 instructions a record, measured), where `take()!` moves it out.
    private var hasSample = false
    private var sampleNested = false
    private var sampleRejected = false
    private var workout: Workout?
    private var route: WorkoutRouteReference?
    private var correlation: Correlation?
    private var generic: GenericRecord?
    /// Points of a route written inline (`<Location>`, exports before iOS 12), per route of the workout.
    private var inlinePoints: [RoutePoint] = []
    private var inlineRoutes: [[RoutePoint]] = []
    /// Reasons already reported with a place: finding a line:column scans the buffer, so only the
    /// first reject of each reason pays for it.
    private var reasonsLocated = Set<RejectReason>()
    /// Route points without a readable position or time, skipped (they are not records).
    private(set) var routePointsSkipped = 0
    private var sampleOverflow = false
    private var overflowLocation = SourceLocation(line: 0, column: 0)

    /// Marks the record being read as too large, remembering where for the first such record.
    private mutating func overflow(_ locator: borrowing XMLLocator) {
        if !sampleOverflow, !reasonsLocated.contains(.tooManyChildren) { overflowLocation = locator.location }
        sampleOverflow = true
    }

    /// - Parameter sampleSink: where samples go (`emit(sample:nested:)`); by default `emit`,
    ///   each in an event.
    init(emit: @escaping (VaultEvent, Bool) throws -> Void, sampleSink: (any ImportSink)? = nil,
         reject: @escaping (RejectReason, SourceLocation) -> Void) {
        self.emit = emit
        self.sampleSink = sampleSink
        self.reject = reject
    }

    private mutating func rejectRecord(_ reason: RejectReason, _ locator: borrowing XMLLocator) {
        let location = reasonsLocated.insert(reason).inserted ? locator.location : SourceLocation(line: 0, column: 0)
        reject(reason, location)
    }

    /// The root element is not `HealthData`.
    struct NotAnExport: Error { var root: String }

    // MARK: Tokens

    mutating func startElement(name: UnsafeRawBufferPointer, attributes: [XMLAttribute], bytes: UnsafeRawBufferPointer, tokenizer: borrowing XMLLocator) throws {
        let tag = Tag(bytes: bytes, attributes: attributes)
        guard let parent = stack.last else {
            guard eq(name, "HealthData") else { throw NotAnExport(root: String(decoding: name, as: UTF8.self)) }
            stack.append(.healthData)
            return
        }
        var pushed = Element.leaf
        if eq(name, "Record") {
            pushed = .record
            sampleNested = parent == .correlation
            sampleRejected = false
            if let reason = readSample(tag) {
                hasSample = false
                sampleRejected = true
                // A bad record inside a correlation is counted where the export repeats it.
                if !sampleNested { rejectRecord(reason, tokenizer) }
            } else {
                hasSample = true
            }
            sampleOverflow = false
        } else if eq(name, "MetadataEntry") {
            if let entry = readMetadata(tag) {
                if parent == .record, (sample?.metadata.count ?? 0) >= ElementLimits.attributes { overflow(tokenizer) } else { addMetadata(entry, parent: parent) }
            }
        } else if eq(name, "InstantaneousBeatsPerMinute") {
            if hasSample, let bpm = tag.value("bpm").flatMap({ DecimalValue.parse($0) }) {
                if sample!.beats.count >= ElementLimits.beats {
                    overflow(tokenizer)
                } else {
                    // Beat times are all different: pooling them would only fill the pool.
                    sample!.beats.append(HeartbeatEntry(bpm: bpm, time: tag.value("time").map { String(decoding: $0, as: UTF8.self) } ?? ""))
                }
            }
        } else if eq(name, "Workout") && parent == .healthData {
            pushed = .workout
            switch readWorkout(tag) {
            case .success(let w): workout = w
            case .failure(let reason):
                workout = nil
                rejectRecord(reason, tokenizer)
            }
        } else if eq(name, "WorkoutEvent") && parent == .workout {
            if (workout?.events.count ?? 0) >= ElementLimits.workoutParts {
            } else if let type = tag.value(.type), let date = tag.value("date").flatMap(HealthTimestamp.parseExportDate) {
                let duration = quantity(tag, "duration", unit: "durationUnit")
                workout?.events.append(WorkoutEvent(type: pool.string(type), date: date, duration: duration?.value))
            }
        } else if eq(name, "WorkoutStatistics") && parent == .workout {
            if (workout?.statistics.count ?? 0) >= ElementLimits.workoutParts {
            } else if let type = tag.value(.type) {
                let unit = tag.value(.unit).map { pool.string($0) }
                let canonical = unit.flatMap { UnitNormalizer.canonical(for: $0) }
                func stat(_ key: StaticString) -> DecimalValue? {
                    guard let number = tag.value(key).flatMap({ DecimalValue.parse($0) }) else { return nil }
                    return canonical.map { number.scaled(by: $0.factor) } ?? number
                }
                workout?.statistics.append(WorkoutStatistic(
                    type: pool.string(type), start: tag.value(.startDate).flatMap(HealthTimestamp.parseExportDate),
                    end: tag.value(.endDate).flatMap(HealthTimestamp.parseExportDate), sum: stat("sum"), average: stat("average"),
                    minimum: stat("minimum"), maximum: stat("maximum"), unit: canonical?.unit ?? unit))
            }
        } else if eq(name, "WorkoutRoute") && parent == .workout {
            pushed = .workoutRoute
            route = WorkoutRouteReference(
                source: readSource(tag) ?? HealthSource(name: ""),
                start: tag.value(.startDate).flatMap(HealthTimestamp.parseExportDate),
                end: tag.value(.endDate).flatMap(HealthTimestamp.parseExportDate))
        } else if eq(name, "Location") && parent == .workoutRoute {
            if inlinePoints.count >= ElementLimits.routePoints {
                routePointsSkipped += 1
            } else if let date = tag.value("date").flatMap(HealthTimestamp.parseExportDate),
               let lat = tag.value("latitude").flatMap({ DecimalValue.parse($0) })?.double,
               let lon = tag.value("longitude").flatMap({ DecimalValue.parse($0) })?.double, abs(lat) <= 90, abs(lon) <= 180 {
                func number(_ key: StaticString) -> Double? { tag.value(key).flatMap { DecimalValue.parse($0) }?.double }
                inlinePoints.append(RoutePoint(
                    time: date.seconds, latitude: lat, longitude: lon,
                    altitude: number("altitude").flatMap(RoutePoint.plausible(altitude:)),
                    speed: number("speed").flatMap(RoutePoint.plausible(speed:)),
                    course: number("course").flatMap(RoutePoint.plausible(course:)),
                    horizontalAccuracy: number("horizontalAccuracy").flatMap(RoutePoint.plausible(accuracy:)),
                    verticalAccuracy: number("verticalAccuracy").flatMap(RoutePoint.plausible(accuracy:))))
            } else {
                routePointsSkipped += 1
            }
        } else if eq(name, "FileReference") && parent == .workoutRoute {
            route?.filePath = tag.value("path").map { pool.string($0) }
        } else if eq(name, "ActivitySummary") && parent == .healthData {
            if let summary = readActivitySummary(tag) { try emit(VaultEvent.activitySummary(summary), false) } else {
                rejectRecord(.unparseableValue, tokenizer)
            }
        } else if eq(name, "Me") && parent == .healthData {
            try emit(.characteristics(allAttributes(tag)), false)
        } else if eq(name, "Correlation") && parent == .healthData {
            pushed = .correlation
            correlation = nil
            if let type = tag.value(.type) {
                if let source = readSource(tag) {
                    switch readSpan(tag) {
                    case .success(let (start, end)):
                        correlation = Correlation(type: pool.string(type), source: source, start: start, end: end,
                                                  creationDate: tag.value(.creationDate).flatMap(HealthTimestamp.parseExportDate))
                    case .failure(let reason): rejectRecord(reason, tokenizer)
                    }
                } else {
                    rejectRecord(.missingSource, tokenizer)
                }
            } else {
                rejectRecord(.missingType, tokenizer)
            }
        } else if eq(name, "ExportDate") && parent == .healthData {
            // When the export was made: not a fact about the person.
        } else if parent == .healthData {
            pushed = .generic
            generic = GenericRecord(element: pool.string(name), attributes: allAttributes(tag))
        } else if parent == .generic || stack.contains(.generic) {
            let prefix = String(decoding: name, as: UTF8.self) + "."
            let children = allAttributes(tag).map { MetadataEntry(key: prefix + $0.key, value: $0.value) }
            if (generic?.attributes.count ?? 0) + children.count <= ElementLimits.attributes { generic?.attributes += children }
        }
        stack.append(pushed)
    }

    mutating func endElement(name: UnsafeRawBufferPointer) throws {
        guard let element = stack.popLast() else { return }
        switch element {
        case .record:
            if sampleOverflow, !sampleRejected, !sampleNested {
                reasonsLocated.insert(.tooManyChildren)
                reject(.tooManyChildren, overflowLocation)
            } else if hasSample, !sampleRejected {
                hasSample = false
                // Moved out, never copied: a copy retains and releases each of its strings.
                if let sampleSink {
                    try sampleSink.emit(sample: sample.take()!, nested: sampleNested)
                } else {
                    try emit(.sample(sample.take()!), sampleNested)
                }
            }
            if hasSample {
                sample = nil
                hasSample = false
            }
        case .workout:
            if let w = workout {
                try emit(.workout(w), false)
                for points in inlineRoutes {
                    try emit(.route(WorkoutRoute(workoutStart: w.start, filePath: "", points: points)), false)
                }
            }
            workout = nil
            inlineRoutes.removeAll()
        case .workoutRoute:
            if let r = route { workout?.routes.append(r) }
            if !inlinePoints.isEmpty { inlineRoutes.append(inlinePoints) }
            inlinePoints.removeAll()
            route = nil
        case .correlation:
            if let c = correlation { try emit(.correlation(c), false) }
            correlation = nil
        case .generic:
            if let g = generic { try emit(.genericRecord(g), false) }
            generic = nil
        case .healthData, .leaf:
            break
        }
    }

    mutating func text(_ bytes: UnsafeRawBufferPointer) throws {}

    // MARK: Records

    /// Reads a record into `sample` (nil there when it cannot), or says why it cannot: the sample
    /// is made where it stays until its end tag, not returned and copied there.
    private mutating func readSample(_ tag: Tag) -> RejectReason? {
        sample = nil
        guard let type = tag.value(.type) else { return .missingType }
        guard let source = readSource(tag) else { return .missingSource }
        let start: HealthTimestamp, end: HealthTimestamp
        switch readSpan(tag) {
        case .success(let span): (start, end) = span
        case .failure(let reason): return reason
        }
        let typeName = pool.string(type)
        let value: SampleValue
        let unitAttribute = tag[.unit]
        if let unitAttribute, unitAttribute.value.isEmpty, NumberedCategoryValues.isCategoryType(typeName),
           let raw = tag.string(.value, pool: &pool, removed: &controlCharactersRemoved) {
            // iOS 8 wrote category samples with `unit=""` and the enumeration's number (`value="1"`).
            value = .category(NumberedCategoryValues.name(type: typeName, number: raw))
        } else if unitAttribute != nil {
            guard let unit = tag.string(.unit, pool: &pool, removed: &controlCharactersRemoved) else { return .malformedReference }
            // iOS 8's aggregate rows (Sleep Cycle's heart rate) carry `average`, `min`, `max` and
            // `recordCount` and no `value`: the average is the value, the rest stays as metadata.
            guard let number = tag.number(.value) ?? (tag[.value] == nil ? tag.number("average") : nil) else { return .unparseableValue }
            if let refusal = Self.refusal(of: number.double, cumulative: aggregationStyles.value(for: typeName, AggregationStyle.of(type:)) == .cumulative) { return refusal }
            if let canonical = canonicalUnits.value(for: unit, UnitNormalizer.canonical(for:)) {
                value = .quantity(number.scaled(by: canonical.factor), unit: canonical.unit)
            } else {
                value = .quantity(number, unit: unit)
            }
        } else if tag[.value] != nil {
            guard let category = tag.string(.value, pool: &pool, removed: &controlCharactersRemoved) else { return .malformedReference }
            value = .category(category)
        } else {
            value = .none
        }
        // A creation date that cannot be read is left out, not a reason to lose the sample.
        let created = tag.value(.creationDate).flatMap { dates.parse($0) }
        // Attributes beyond Apple's usual ones (iOS 8's `HKWasUserEntered="1"`, `sessionId`) are
        // metadata: every attribute is kept, and tells samples apart.
        var metadata: [MetadataEntry] = []
        if tag.hasOtherAttributes {
            for a in tag.attributes where RecordAttribute.named(UnsafeRawBufferPointer(rebasing: tag.bytes[a.name])) == nil {
                let key = pool.string(UnsafeRawBufferPointer(rebasing: tag.bytes[a.name]))
                if let v = tag.string(a, pool: &pool, removed: &controlCharactersRemoved) { metadata.append(MetadataEntry(key: key, value: v)) }
            }
        }
        sample = HealthSample(type: typeName, source: source, start: start, end: end, value: value, metadata: metadata, creationDate: created)
        return nil
    }

    /// Strings nearly every record repeats, as literals for the pool to start with: the catalog's
    /// type identifiers and the metadata keys Apple's apps write.
    static let literalStrings: [String] = HealthKitCatalog.entries.map(\.identifier) + [
        "HKMetadataKeyHeartRateMotionContext", "HKMetadataKeySyncIdentifier", "HKMetadataKeySyncVersion", "HKTimeZone",
        "HKWasUserEntered", "HKIndoorWorkout", "HKAverageMETs", "HKElevationAscended", "HKWeatherTemperature",
        "HKWeatherHumidity", "HKMetadataKeyDevicePlacementSide", "HKMetadataKeyAppleDeviceCalibrated",
        "HKMetadataKeyHeartRateSensorLocation", "HKMetadataKeyUserMotionContext", "HKMetadataKeyVO2MaxTestType",
        "HKMetadataKeyAudioExposureLevel", "HKMetadataKeyHeadphoneGain", "HKMetadataKeyBloodGlucoseMealTime",
        "HKMetadataKeyAlgorithmVersion", "HKMetadataKeySessionEstimate", "HKMetadataKeyBarometricPressure",
        "HKExternalUUID", "HKFoodType", "HKSwimmingLocationType", "HKSwimmingStrokeStyle", "HKLapLength",
        "HKMetadataKeyAppleFitnessPlusSession", "HKMetadataKeyPhysicalEffortEstimationType",
        "HKMetadataKeyHeartRateRecoveryTestType", "HKMetadataKeyHeartRateEventThreshold",
    ]

    private mutating func readWorkout(_ tag: Tag) -> Result<Workout, RejectReason> {
        guard let type = tag.value("workoutActivityType") else { return .failure(.missingType) }
        guard let source = readSource(tag) else { return .failure(.missingSource) }
        let start: HealthTimestamp, end: HealthTimestamp
        switch readSpan(tag) {
        case .success(let span): (start, end) = span
        case .failure(let reason): return .failure(reason)
        }
        var w = Workout(activityType: pool.string(type), source: source, start: start, end: end)
        w.duration = quantity(tag, "duration", unit: "durationUnit", defaultUnit: "min")?.value
        w.totalDistance = quantity(tag, "totalDistance", unit: "totalDistanceUnit")?.value
        w.totalEnergy = quantity(tag, "totalEnergyBurned", unit: "totalEnergyBurnedUnit")?.value
        return .success(w)
    }

    private mutating func readActivitySummary(_ tag: Tag) -> ActivitySummary? {
        guard let day = tag.value("dateComponents").flatMap(HealthTimestamp.parseDay) else { return nil }
        let energyUnit = tag.value("activeEnergyBurnedUnit").map { pool.string($0) } ?? "kcal"
        let factor = UnitNormalizer.canonical(for: energyUnit)?.factor ?? .identity
        let keys: [StaticString] = ["activeEnergyBurned", "activeEnergyBurnedGoal", "appleMoveTime", "appleMoveTimeGoal",
                                    "appleExerciseTime", "appleExerciseTimeGoal", "appleStandHours", "appleStandHoursGoal"]
        for key in keys where tag.attribute(key) != nil && tag.number(key) == nil { return nil }
        func number(_ key: StaticString) -> DecimalValue? { tag.number(key) }
        return ActivitySummary(
            day: day, activeEnergy: number("activeEnergyBurned")?.scaled(by: factor),
            activeEnergyGoal: number("activeEnergyBurnedGoal")?.scaled(by: factor),
            moveTime: number("appleMoveTime"), moveTimeGoal: number("appleMoveTimeGoal"),
            exerciseTime: number("appleExerciseTime"), exerciseTimeGoal: number("appleExerciseTimeGoal"),
            standHours: number("appleStandHours"), standHoursGoal: number("appleStandHoursGoal"))
    }

    /// A value with its unit attribute, normalised to the canonical unit.
    private mutating func quantity(_ tag: Tag, _ key: StaticString, unit unitKey: StaticString, defaultUnit: String? = nil) -> (value: DecimalValue, unit: String)? {
        guard let number = tag.value(key).flatMap({ DecimalValue.parse($0) }) else { return nil }
        guard let unit = tag.value(unitKey).map({ pool.string($0) }) ?? defaultUnit else { return (number, "") }
        guard let canonical = UnitNormalizer.canonical(for: unit) else { return (number, unit) }
        return (number.scaled(by: canonical.factor), canonical.unit)
    }

    /// The source of a record, whose attributes nearly always repeat the previous record's:
    /// then it is the previous record's source, without decoding or looking anything up.
    private mutating func readSource(_ tag: Tag) -> HealthSource? {
        for recent in recentSources where recent.matches(tag) {
            controlCharactersRemoved += recent.controlsRemoved
            return recent.source
        }
        let removedBefore = controlCharactersRemoved
        let source = decodeSource(tag)
        if recentSources.count == 4 { recentSources.removeLast() }
        recentSources.insert(ParsedSource(tag, source: source, controlsRemoved: controlCharactersRemoved - removedBefore), at: 0)
        return source
    }

    private mutating func decodeSource(_ tag: Tag) -> HealthSource? {
        // iOS 8 and early iOS 9 exports name the source `source`.
        guard let name = tag.string(.sourceName, pool: &pool, removed: &controlCharactersRemoved)
                ?? tag.string(.source, pool: &pool, removed: &controlCharactersRemoved) else { return nil }
        let version = tag.string(.sourceVersion, pool: &pool, removed: &controlCharactersRemoved)
        var device: HealthDevice?
        if let attribute = tag[.device] {
            // The device string repeats but for the object address at its start: look it up by
            // the raw bytes after the address, and decode and parse only the first time.
            let raw = UnsafeRawBufferPointer(rebasing: tag.bytes[attribute.value])
            let key = pool.string(Self.deviceKeyBytes(raw))
            if let known = devices[key] { device = known } else {
                guard let decoded = tag.string(attribute, pool: &pool, removed: &controlCharactersRemoved) else { return nil }
                let parsed = Self.parseDevice(Self.deviceKey(decoded))
                if devices.count > 10_000 { devices.removeAll() }
                devices[key] = parsed
                device = parsed
            }
        }
        return HealthSource(name: name, version: version, device: device)
    }

    private mutating func readMetadata(_ tag: Tag) -> MetadataEntry? {
        guard let key = tag.string("key", pool: &pool, removed: &controlCharactersRemoved),
              let value = tag.string(.value, pool: &pool, removed: &controlCharactersRemoved) else { return nil }
        return MetadataEntry(key: key, value: value)
    }

    private mutating func addMetadata(_ entry: MetadataEntry, parent: Element) {
        switch parent {
        case .record: sample?.metadata.append(entry)
        case .workout: workout?.metadata.append(entry)
        case .workoutRoute: route?.metadata.append(entry)
        case .correlation: correlation?.metadata.append(entry)
        case .generic: generic?.attributes.append(MetadataEntry(key: "MetadataEntry." + entry.key, value: entry.value))
        case .healthData, .leaf: break
        }
    }

    private mutating func allAttributes(_ tag: Tag) -> [MetadataEntry] {
        tag.attributes.compactMap { a in
            let key = pool.string(UnsafeRawBufferPointer(rebasing: tag.bytes[a.name]))
            guard let value = tag.string(a, pool: &pool, removed: &controlCharactersRemoved) else { return nil }
            return MetadataEntry(key: key, value: value)
        }
    }

    /// `startDate` and `endDate`, checked: both present, readable, plausible and in order.
    mutating func readSpan(_ tag: Tag) -> Result<(HealthTimestamp, HealthTimestamp), RejectReason> {
        guard let startRaw = tag.value(.startDate), let endRaw = tag.value(.endDate) else { return .failure(.missingDates) }
        guard let start = dates.parse(startRaw), let end = dates.parse(endRaw) else {
            return .failure(.unparseableDate)
        }
        guard Self.plausible(start), Self.plausible(end) else { return .failure(.dateOutOfRange) }
        guard end.seconds >= start.seconds else { return .failure(.endBeforeStart) }
        return .success((start, end))
    }

    /// Years 1900–2200 and a real UTC offset (at most 14 hours): anything else is a damaged or
    /// synthetic date, not a measurement.
    static func plausible(_ t: HealthTimestamp) -> Bool {
        t.seconds >= -2_208_988_800 && t.seconds < 7_258_118_400 && abs(t.utcOffset) <= 14 * 3600
    }

    /// A value of at most 10^12 in magnitude: no measurement of a body comes near it (a year of
    /// steps is about 10^7), and sums of such values stay exact and finite in every read model.
    /// 1e308 would make totals infinite.
    static func plausible(_ value: Double) -> Bool { value.magnitude <= 1e12 }

    /// Why a quantity's number is refused, whichever importer read it, or nil: a negative amount
    /// of a quantity that adds up (`cumulative`), or a magnitude no measurement has.
    static func refusal(of value: Double, cumulative: Bool) -> RejectReason? {
        if value < 0, cumulative { return .negativeAmount }
        return plausible(value) ? nil : .valueOutOfRange
    }

    // MARK: Devices

    /// The raw (still entity-encoded) device bytes after `&gt;, `, which ends the object address.
    static func deviceKeyBytes(_ raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let marker: StaticString = "&gt;, "
        let m = marker.utf8CodeUnitCount
        guard raw.count > m else { return raw }
        for i in 0...(raw.count - m) where raw[i] == 0x26 {
            if memcmp(raw.baseAddress! + i, marker.utf8Start, m) == 0 {
                return UnsafeRawBufferPointer(rebasing: raw[(i + m)...])
            }
        }
        return raw
    }

    /// The device string without its leading object address, which changes from record to record.
    static func deviceKey(_ raw: String) -> String {
        guard raw.hasPrefix("<<HKDevice"), let close = raw.range(of: ">, ") else { return raw }
        return String(raw[close.upperBound...])
    }

    static let deviceKeys = ["name", "manufacturer", "model", "hardware", "software", "localIdentifier", "UDIDeviceIdentifier", "FDAUDI", "firmware"]

    /// Parses `name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,7, software:10.2>`.
    static func parseDevice(_ key: String) -> HealthDevice {
        var text = Substring(key)
        if text.hasSuffix(">") { text = text.dropLast() }
        var starts: [(String.Index, String)] = []
        for k in deviceKeys {
            var search = text.startIndex
            while let r = text.range(of: k + ":", range: search..<text.endIndex) {
                let atStart = r.lowerBound == text.startIndex
                let afterSeparator = r.lowerBound >= text.index(text.startIndex, offsetBy: 2, limitedBy: text.endIndex) ?? text.endIndex
                    && text[text.index(r.lowerBound, offsetBy: -2)..<r.lowerBound] == ", "
                if atStart || afterSeparator {
                    starts.append((r.lowerBound, k))
                    break
                }
                search = r.upperBound
            }
        }
        starts.sort { $0.0 < $1.0 }
        var fields: [String: String] = [:]
        for (i, (start, k)) in starts.enumerated() {
            let valueStart = text.index(start, offsetBy: k.count + 1)
            var valueEnd = i + 1 < starts.count ? starts[i + 1].0 : text.endIndex
            if i + 1 < starts.count { valueEnd = text.index(valueEnd, offsetBy: -2) }
            if valueStart <= valueEnd { fields[k] = String(text[valueStart..<valueEnd]) }
        }
        if fields.isEmpty { return HealthDevice(name: key) }
        return HealthDevice(name: fields["name"], manufacturer: fields["manufacturer"], model: fields["model"],
                            hardware: fields["hardware"], software: fields["software"])
    }
}
