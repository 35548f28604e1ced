import BinaryCoding
import Foundation
import HealthModel

/// Decodes events in log order, learning the interned strings and sources as it meets their
/// definitions. Refuses unknown versions and kinds, truncated fields and trailing bytes.
package final class EventDecoder {
    /// Interned strings by id; index 0 is "none".
    package private(set) var strings: [String] = [""]
    /// Interned sources by id; index 0 is unused.
    package private(set) var sources: [HealthSource] = [HealthSource(name: "")]

    package init() {}

    /// A decoder that starts from tables already known (`EventEncoder.decoder()`).
    package init(strings: [String], sources: [HealthSource]) {
        self.strings = strings
        self.sources = sources
    }

    /// The event, or nil for a definition (which is learned).
    package func decode(_ bytes: UnsafeRawBufferPointer, index: UInt64) throws -> VaultEvent? {
        var r = EventReader(bytes, index: index)
        let v = try r.byte()
        // The messages name no decrypted bytes.
        guard v == EventCoding.version else { throw r.fail("unknown encoding version (written by a newer build?)") }
        guard let kind = EventCoding.Kind(rawValue: try r.varint()) else { throw r.fail("unknown event kind (written by a newer build?)") }
        var event: VaultEvent?
        switch kind {
        case .vaultCreated:
            event = .vaultCreated(at: try r.date(), kdf: try r.string())
        case .passphraseChanged:
            event = .passphraseChanged(at: try r.date())
        case .importRecorded:
            let at = try r.date()
            // Plain numbers, not element counts: no bound from the bytes left.
            func number() throws -> Int {
                let n = try r.varint()
                guard n <= UInt64(Int.max) else { throw r.fail("number out of range") }
                return Int(n)
            }
            let file = try r.string(), format = try r.string()
            let added = try number(), duplicates = try number(), rejected = try number()
            event = .importRecorded(at: at, ImportRecord(file: file, format: format, added: added, duplicates: duplicates, rejected: rejected,
                                                         replaced: r.isAtEnd ? 0 : try number()))
        case .goalSet:
            let at = try r.date()
            guard let ring = PersistedNames.ring(named: try r.string()) else { throw r.fail("unknown ring") }
            event = .goalSet(GoalSetting(at: at, ring: ring, value: try r.decimal(), from: LocalDay(dayNumber: try r.signed())))
        case .sourceOrderSet:
            let at = try r.date()
            var keys: [SourceKey] = []
            for _ in 0..<(try r.count()) {
                let name = try r.string()
                guard let deviceClass = PersistedNames.deviceClass(named: try r.string()) else { throw r.fail("unknown device class") }
                keys.append(SourceKey(name: name, deviceClass: deviceClass))
            }
            event = .sourceOrderSet(at: at, keys)
        case .recipientAdded:
            let at = try r.date(), name = try r.string()
            guard let key = Data(base64Encoded: try r.string()), key.count == 32 else { throw r.fail("malformed recipient key") }
            event = .recipientAdded(RecipientRecord(at: at, name: name, publicKey: Array(key)))
        case .consentGranted:
            let at = try r.date(), id = try r.string(), recipient = try r.string()
            var categories: [HealthCategory] = []
            for _ in 0..<(try r.count()) {
                guard let c = PersistedNames.category(named: try r.string()) else { throw r.fail("unknown consent category") }
                categories.append(c)
            }
            var days: [LocalDay?] = []
            for _ in 0..<3 { days.append(try r.varint() == 1 ? LocalDay(dayNumber: try r.signed()) : nil) }
            guard let granularity = PersistedNames.granularity(named: try r.string()) else { throw r.fail("unknown granularity") }
            let purpose = try r.varint() == 1 ? try r.string() : nil
            var otherTypes: [String]?
            if !r.isAtEnd {
                var types: [String] = []
                for _ in 0..<(try r.count()) { types.append(try r.string()) }
                otherTypes = types
            }
            event = .consentGranted(ConsentGrant(id: id, at: at, recipient: recipient, categories: categories, from: days[0], to: days[1],
                                                 granularity: granularity, expires: days[2], purpose: purpose, otherTypes: otherTypes))
        case .consentRevoked:
            let at = try r.date(), recipient = try r.string()
            var categories: [HealthCategory]?
            if try r.varint() == 1 {
                var list: [HealthCategory] = []
                for _ in 0..<(try r.count()) {
                    guard let c = PersistedNames.category(named: try r.string()) else { throw r.fail("unknown consent category") }
                    list.append(c)
                }
                categories = list
            }
            event = .consentRevoked(ConsentRevocation(at: at, recipient: recipient, categories: categories))
        case .identityRecorded:
            let at = try r.date()
            guard let reason = PersistedNames.identityReason(named: try r.string()) else { throw r.fail("unknown identity reason") }
            guard let signing = Data(base64Encoded: try r.string()), signing.count == 32,
                  let encryption = Data(base64Encoded: try r.string()), encryption.count == 32 else { throw r.fail("malformed identity key") }
            event = .identityRecorded(IdentityRecord(at: at, reason: reason, signingKey: Array(signing), encryptionKey: Array(encryption)))
        case .masterKeyRotated:
            event = .masterKeyRotated(at: try r.date())
        case .erased:
            let at = try r.date(), eraseID = try r.string()
            var labels: [String] = []
            for _ in 0..<(try r.count()) { labels.append(try r.string()) }
            let n = try r.varint()
            guard n <= UInt64(Int.max) else { throw r.fail("number out of range") }
            event = .erased(ErasureRecord(at: at, eraseID: eraseID, labels: labels, events: Int(n)))
        case .tailCut:
            let at = try r.date(), offset = try r.varint(), length = try r.varint()
            event = .tailCut(TailCutRecord(at: at, offset: offset, length: length, digest: try r.string(), keptAs: try r.string()))
        case .companionPaired:
            let at = try r.date(), name = try r.string()
            guard try r.varint() == 32 else { throw r.fail("malformed token hash") }
            event = .companionPaired(CompanionPairing(at: at, name: name, tokenHash: try r.rawBytes(32)))
        case .companionRevoked:
            event = .companionRevoked(CompanionRevocation(at: try r.date(), name: try r.string()))
        case .trackerDefined:
            let at = try r.date(), name = try r.string()
            var levels: [TrackerLevel] = []
            for _ in 0..<(try r.count()) { levels.append(TrackerLevel(name: try r.string(), value: try r.decimal())) }
            var success: [String] = []
            for _ in 0..<(try r.count()) { success.append(try r.string()) }
            let minutes = try r.varint()
            guard minutes < 1440 else { throw r.fail("day start out of range") }
            let hasType = try r.varint()
            guard hasType <= 1 else { throw r.fail("malformed tracker definition") }
            let type = hasType == 1 ? try r.string() : nil
            event = .trackerDefined(TrackerDefinition(at: at, name: name, levels: levels, success: success,
                                                      dayStartsMinutes: Int(minutes), healthKitType: type))
        case .trackerEntry:
            let tracker = try r.string(), level = try r.string(), value = try r.decimal(), at = try r.timestamp()
            let dayNumber = try r.signed()
            // A tracker day is the entry's local day or the one before (its day starts later).
            let localDay = LocalDay.floorDivide(at.seconds + Int64(at.utcOffset), 86_400)
            guard dayNumber == localDay || dayNumber == localDay - 1 else { throw r.fail("tracker day out of range") }
            let day = LocalDay(dayNumber: dayNumber)
            guard let category = PersistedNames.category(named: try r.string()) else { throw r.fail("unknown consent category") }
            event = .trackerEntry(TrackerEntry(tracker: tracker, level: level, value: value, at: at, day: day, category: category))
        case .exerciseDefined:
            let at = try r.date()
            event = .exerciseDefined(ExerciseDefinition(at: at, exercise: try Self.exercise(&r)))
        case .practiceLogged:
            let exercise = try Self.exercise(&r)
            let repetitions = try r.varint(), seconds = try r.varint()
            guard repetitions <= UInt64(Int32.max), seconds <= UInt64(Int32.max) else { throw r.fail("practice figures out of range") }
            event = .practiceLogged(PracticeEntry(exercise: exercise, repetitions: Int(repetitions), seconds: seconds == 0 ? nil : Int(seconds) - 1,
                                                  at: try r.timestamp()))
        case .sampleSuperseded:
            let index = try r.varint()
            event = .sampleSuperseded(SampleSupersession(replacedIndex: index, replaced: try sample(&r)))
        case .exportPerformed:
            let at = try r.date(), recipient = try r.string()
            var ids: [String] = []
            for _ in 0..<(try r.count()) { ids.append(try r.string()) }
            var counts: [String: Int] = [:]
            for _ in 0..<(try r.count()) {
                let category = try r.string()
                let n = try r.varint()
                guard n <= UInt64(Int.max) else { throw r.fail("number out of range") }
                counts[category] = Int(n)
            }
            event = .exportPerformed(ExportRecord(at: at, recipient: recipient, consentIDs: ids, counts: counts, bundleHash: try r.string()))
        case .defineString:
            strings.append(try r.string())
        case .defineSource:
            let hasDevice = try r.varint() == 1
            let name = try string(&r), version = try optionalString(&r)
            let device = HealthDevice(name: try optionalString(&r), manufacturer: try optionalString(&r), model: try optionalString(&r),
                                      hardware: try optionalString(&r), software: try optionalString(&r))
            sources.append(HealthSource(name: name, version: version, device: hasDevice ? device : nil))
        case .sample:
            event = .sample(try sample(&r))
        case .workout:
            event = .workout(try workout(&r))
        case .route:
            event = .route(try route(&r))
        case .activitySummary:
            let day = try r.signed()
            let flags = try r.varint()
            var values: [DecimalValue?] = []
            for i in 0..<8 { values.append(flags & (1 << i) != 0 ? try r.decimal() : nil) }
            event = .activitySummary(ActivitySummary(
                day: day, activeEnergy: values[0], activeEnergyGoal: values[1], moveTime: values[2], moveTimeGoal: values[3],
                exerciseTime: values[4], exerciseTimeGoal: values[5], standHours: values[6], standHoursGoal: values[7]))
        case .characteristics:
            event = .characteristics(try metadata(&r))
        case .correlation, .correlationWhole:
            let type = try string(&r), source = try self.source(&r)
            let (start, end) = try span(&r)
            var created: HealthTimestamp?
            if kind == .correlationWhole {
                switch try r.varint() {
                case 0: break
                case 1: created = try creationDate(&r, after: end)
                default: throw r.fail("unknown correlation flags")
                }
            }
            event = .correlation(Correlation(type: type, source: source, start: start, end: end, metadata: try metadata(&r), creationDate: created))
        case .genericRecord:
            event = .genericRecord(GenericRecord(element: try string(&r), attributes: try metadata(&r)))
        case .genericRecordWithResource:
            let element = try string(&r)
            let attributes = try metadata(&r) + [MetadataEntry(key: GenericRecord.resourceKey, value: try r.string())]
            event = .genericRecord(GenericRecord(element: element, attributes: attributes))
        case .electrocardiogram:
            let recorded = try r.timestamp(), unit = try string(&r)
            let rate: Double?
            switch try r.varint() {
            case 0: rate = nil
            case 1: rate = try r.decimal().double
            default: throw r.fail("unknown ECG flags")
            }
            let fields = try metadata(&r)
            let n = try r.count()
            var values: [Int64] = []
            values.reserveCapacity(n)
            var previous: Int64 = 0
            for _ in 0..<n {
                previous = try r.sum(previous, try r.signed())
                values.append(previous)
            }
            event = .electrocardiogram(Electrocardiogram(recorded: recorded, fields: fields, millivoltages: values, unit: unit, sampleRate: rate))
        }
        guard r.isAtEnd else { throw r.fail("trailing bytes") }
        return event
    }

    /// The string with id `id` as far as this decoder has learned the table; nil for none.
    package func string(id: UInt64) -> String? {
        id > 0 && id < UInt64(strings.count) ? strings[Int(id)] : nil
    }

    private func string(_ r: inout EventReader) throws -> String {
        try string(id: try r.varint(), &r)
    }

    /// The string with id `id`, or the error of a reference to none.
    private func string(id: UInt64, _ r: inout EventReader) throws -> String {
        guard let s = string(id: id) else { throw r.fail("string id \(id) is not defined") }
        return s
    }

    private func optionalString(_ r: inout EventReader) throws -> String? {
        let id = try r.varint()
        return id == 0 ? nil : try string(id: id, &r)
    }

    private func source(_ r: inout EventReader) throws -> HealthSource {
        sources[try sourceID(&r)]
    }

    /// A reference to a defined source.
    private func sourceID(_ r: inout EventReader) throws -> Int {
        let id = try r.varint()
        guard id > 0, id < UInt64(sources.count) else { throw r.fail("source id \(id) is not defined") }
        return Int(id)
    }

    private func span(_ r: inout EventReader) throws -> (HealthTimestamp, HealthTimestamp) {
        let start = try r.timestamp()
        let duration = try r.signed()
        let endOffset = try r.varint() == 1 ? try r.utcOffset() : start.utcOffset
        return (start, HealthTimestamp(seconds: try r.sum(start.seconds, duration), utcOffset: endOffset))
    }

    /// Seconds after the record's end, and the UTC offset when it differs from the end's.
    private func creationDate(_ r: inout EventReader, after end: HealthTimestamp) throws -> HealthTimestamp {
        let code = try r.varint()
        let delta = ZigZag.decode(code >> 1)
        let offset = code & 1 == 1 ? try r.utcOffset() : end.utcOffset
        return HealthTimestamp(seconds: try r.sum(end.seconds, delta), utcOffset: offset)
    }

    private func metadata(_ r: inout EventReader) throws -> [MetadataEntry] {
        let n = try r.count()
        var entries: [MetadataEntry] = []
        entries.reserveCapacity(n)
        for _ in 0..<n {
            let key = try string(&r)
            let code = try r.varint()
            let value: String
            if code & 1 == 0 {
                value = try string(id: code >> 1, &r)
            } else {
                value = try r.inlineString(length: code >> 1)
            }
            entries.append(MetadataEntry(key: key, value: value))
        }
        return entries
    }

    /// A sample's value: none, a quantity and its unit, or a category value.
    private func sampleValue(kind: UInt64, _ r: inout EventReader) throws -> SampleValue {
        switch kind {
        case 0: return .none
        case 1: return .quantity(try r.decimal(), unit: try string(&r))
        case 2: return .category(try string(&r))
        default: throw r.fail("unknown value kind")
        }
    }

    /// The flags of the fields that follow a sample's value (`EventCoding.SampleExtras`).
    private func sampleExtras(_ r: inout EventReader) throws -> UInt64 {
        let extras = try r.varint()
        guard extras & ~EventCoding.SampleExtras.known == 0 else { throw r.fail("unknown sample fields (written by a newer build?)") }
        return extras
    }

    private func sample(_ r: inout EventReader) throws -> HealthSample {
        let valueKind = try r.varint()
        let type = try string(&r), source = try self.source(&r)
        let (start, end) = try span(&r)
        var s = HealthSample(type: type, source: source, start: start, end: end, value: try sampleValue(kind: valueKind, &r))
        let extras = try sampleExtras(&r)
        if extras & EventCoding.SampleExtras.creationDate != 0 { s.creationDate = try creationDate(&r, after: end) }
        if extras & EventCoding.SampleExtras.metadata != 0 { s.metadata = try metadata(&r) }
        if extras & EventCoding.SampleExtras.beats != 0 {
            let n = try r.count()
            for _ in 0..<n { s.beats.append(HeartbeatEntry(bpm: try r.decimal(), time: try r.string())) }
        }
        if extras & EventCoding.SampleExtras.wholeIdentity == 0, let name = Self.numberedCategoryValue(type: s.type, value: s.value) {
            s.value = .category(name)
        }
        return s
    }

    /// The category value of a legacy sample that builds before commit 3850060 (2026-11-24
    /// 18:09 UTC) stored as a quantity: iOS 8's category records (`unit=""`, `value="1"`) came in
    /// as a number with an empty unit. Such a sample decodes as the category sample an import
    /// makes of the same record today (its bytes, and so its identity, stay as written;
    /// docs/event-encoding.md, "Identity"). nil for every other value.
    package static func numberedCategoryValue(type: String, value: SampleValue) -> String? {
        guard case .quantity(let number, let unit) = value, unit.isEmpty, NumberedCategoryValues.isCategoryType(type) else { return nil }
        return NumberedCategoryValues.name(type: type, number: number.description)
    }

    /// A sample's type, source, span and value: what the read models take from it.
    package struct SampleHead {
        package var type: String
        /// The source's id in this decoder's table (`sources`).
        package var sourceID: Int
        package var start: HealthTimestamp
        package var end: HealthTimestamp
        package var value: SampleValue
        /// When HealthKit stored it, if the record said.
        package var created: HealthTimestamp?
        /// Its metadata (read models count it, and tell rewritten copies apart by it).
        package var metadata: [MetadataEntry]
    }

    /// The head of a sample event with its creation date and metadata, its beats checked as
    /// `decode` checks them but not built, and its source as an id; nil for any other event
    /// (`decode` reads those, and learns the definitions). A rebuild reads a year's samples this
    /// way: building each sample whole, its source's seven strings among it, cost more than the
    /// read models' work (docs/benchmarks-history.md).
    package func sampleHead(_ bytes: UnsafeRawBufferPointer, index: UInt64) throws -> SampleHead? {
        guard bytes.count >= 2, bytes[0] == EventCoding.version, bytes[1] == UInt8(EventCoding.Kind.sample.rawValue) else { return nil }
        var r = EventReader(bytes, index: index)
        r.offset = 2
        let valueKind = try r.varint()
        let type = try string(&r)
        let sourceID = try sourceID(&r)
        let (start, end) = try span(&r)
        var value = try sampleValue(kind: valueKind, &r)
        let extras = try sampleExtras(&r)
        let created = extras & EventCoding.SampleExtras.creationDate != 0 ? try creationDate(&r, after: end) : nil
        let metadata = extras & EventCoding.SampleExtras.metadata != 0 ? try self.metadata(&r) : []
        if extras & EventCoding.SampleExtras.beats != 0 {
            for _ in 0..<(try r.count()) {
                _ = try r.decimal()
                _ = try r.string()
            }
        }
        guard r.isAtEnd else { throw r.fail("trailing bytes") }
        if extras & EventCoding.SampleExtras.wholeIdentity == 0, let name = Self.numberedCategoryValue(type: type, value: value) {
            value = .category(name)
        }
        return SampleHead(type: type, sourceID: sourceID, start: start, end: end, value: value, created: created, metadata: metadata)
    }

    private func workout(_ r: inout EventReader) throws -> Workout {
        let type = try string(&r), source = try self.source(&r)
        let (start, end) = try span(&r)
        var x = Workout(activityType: type, source: source, start: start, end: end)
        let flags = try r.varint()
        if flags & 1 != 0 { x.duration = try r.decimal() }
        if flags & 2 != 0 { x.totalDistance = try r.decimal() }
        if flags & 4 != 0 { x.totalEnergy = try r.decimal() }
        x.metadata = try metadata(&r)
        for _ in 0..<(try r.count()) {
            let type = try string(&r), date = try r.timestamp()
            let duration = try r.varint() == 1 ? try r.decimal() : nil
            x.events.append(WorkoutEvent(type: type, date: date, duration: duration))
        }
        for _ in 0..<(try r.count()) {
            var s = WorkoutStatistic(type: try string(&r))
            let f = try r.varint()
            if f & 1 != 0 { s.start = try r.timestamp() }
            if f & 2 != 0 { s.end = try r.timestamp() }
            if f & 4 != 0 { s.sum = try r.decimal() }
            if f & 8 != 0 { s.average = try r.decimal() }
            if f & 16 != 0 { s.minimum = try r.decimal() }
            if f & 32 != 0 { s.maximum = try r.decimal() }
            if f & 64 != 0 { s.unit = try string(&r) }
            x.statistics.append(s)
        }
        for _ in 0..<(try r.count()) {
            var ref = WorkoutRouteReference(source: try self.source(&r))
            let f = try r.varint()
            if f & 1 != 0 { ref.start = try r.timestamp() }
            if f & 2 != 0 { ref.end = try r.timestamp() }
            if f & 4 != 0 { ref.filePath = try string(&r) }
            ref.metadata = try metadata(&r)
            x.routes.append(ref)
        }
        return x
    }

    private func route(_ r: inout EventReader) throws -> WorkoutRoute {
        let start = try r.timestamp()
        let path = try string(&r)
        let n = try r.count()
        var points: [RoutePoint] = []
        points.reserveCapacity(n)
        var previous = (time: start.seconds, lat: Int64(0), lon: Int64(0), alt: Int64(0))
        for _ in 0..<n {
            let f = try r.varint()
            let time = try r.sum(previous.time, try r.signed())
            let lat = try r.sum(previous.lat, try r.signed()), lon = try r.sum(previous.lon, try r.signed())
            var p = RoutePoint(time: time, latitude: Double(lat) / 1e7, longitude: Double(lon) / 1e7)
            if f & 1 != 0 {
                previous.alt = try r.sum(previous.alt, try r.signed())
                p.altitude = Double(previous.alt) / 1000
            }
            if f & 2 != 0 { p.speed = Double(try r.signed()) / 1000 }
            if f & 4 != 0 { p.course = Double(try r.signed()) / 100 }
            if f & 8 != 0 { p.horizontalAccuracy = Double(try r.signed()) / 1000 }
            if f & 16 != 0 { p.verticalAccuracy = Double(try r.signed()) / 1000 }
            previous = (time, lat, lon, previous.alt)
            points.append(p)
        }
        return WorkoutRoute(workoutStart: start, filePath: path, points: points)
    }
}


extension EventDecoder {
    /// An exercise as `EventEncoder.exercise` wrote it; unknown body parts or motions are damage.
    static func exercise(_ r: inout EventReader) throws -> Exercise {
        let name = try r.string()
        var parts: [BodyPart] = []
        for _ in 0..<(try r.count(limit: 64)) {
            guard let part = BodyPart(rawValue: try r.string()) else { throw r.fail("unknown body part") }
            parts.append(part)
        }
        guard let motion = Motion(rawValue: try r.string()) else { throw r.fail("unknown motion") }
        return Exercise(name: name, bodyParts: parts, motion: motion)
    }
}
