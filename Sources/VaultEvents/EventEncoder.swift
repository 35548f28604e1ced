import BinaryCoding
import Foundation
import HealthModel

/// Encodes events, interning strings and sources. Definitions an event needs are returned with
/// it and must be appended to the log before it, in order: ids are assigned here.
package final class EventEncoder {
    private var strings: [String: UInt64] = [:]
    /// The strings by id (id 0, none, is the empty slot at the start).
    private var stringsByID: [String] = [""]
    private var sources: [HealthSource: UInt64] = [:]
    private var nextString: UInt64 = 1
    private var nextSource: UInt64 = 1
    /// Definitions produced since the last `takeDefinitions()`.
    private var pending: [[UInt8]] = []

    package init() {}

    /// An encoder that continues the tables a decoder rebuilt from the log.
    package init(continuing decoder: EventDecoder) {
        for (i, s) in decoder.strings.enumerated() where i > 0 { strings[s] = UInt64(i) }
        stringsByID = decoder.strings
        for (i, s) in decoder.sources.enumerated() where i > 0 { sources[s] = UInt64(i) }
        nextString = UInt64(decoder.strings.count)
        nextSource = UInt64(decoder.sources.count)
    }

    /// Definitions to write before the events encoded since the last call.
    package func takeDefinitions() -> [[UInt8]] {
        // Nearly every event defines nothing: a flag answers without touching the array (an
        // access to it is checked for exclusivity at run time, a plain Bool's is not).
        guard definitionsPending else { return [] }
        definitionsPending = false
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    /// Whether `pending` holds anything.
    private var definitionsPending = false

    /// Sources' ids by the sources' instances (`SourceMemo`): the phone's and the watch's records
    /// interleave, and a hit costs a word's comparison instead of hashing seven strings.
    private let recentSources = SourceMemo<UInt64>()
    /// Strings' ids by the strings' identity (`StringMemo`): a sample's type, unit and category
    /// value come from the parser's pool, so most find their id without hashing.
    private let recentIDs = StringMemo<UInt64>()

    package func id(_ s: String) -> UInt64 { recentIDs.value(for: s) { internedID($0) } }

    private func internedID(_ s: String) -> UInt64 {
        if let id = strings[s] { return id }
        let id = nextString
        nextString += 1
        strings[s] = id
        stringsByID.append(s)
        var w = EventWriter(kind: .defineString)
        w.string(s)
        pending.append(w.bytes)
        definitionsPending = true
        return id
    }

    package func id(_ s: String?) -> UInt64 { s.map { id($0) } ?? 0 }

    /// The string with id `id` in this table; nil when it has none.
    package func string(id: UInt64) -> String? {
        id > 0 && id < UInt64(stringsByID.count) ? stringsByID[Int(id)] : nil
    }

    package func id(_ source: HealthSource) -> UInt64 { recentSources.value(for: source) { internedID($0) } }

    /// A decoder that knows every string and source this encoder has interned so far: it reads
    /// the events this encoder made without their definitions being read back from the log.
    package func decoder() -> EventDecoder {
        var sourcesByID = [HealthSource](repeating: HealthSource(name: ""), count: Int(nextSource))
        for (source, id) in sources { sourcesByID[Int(id)] = source }
        return EventDecoder(strings: stringsByID, sources: sourcesByID)
    }

    private func internedID(_ source: HealthSource) -> UInt64 {
        if let id = sources[source] { return id }
        let fields = [id(source.name), id(source.version), id(source.device?.name), id(source.device?.manufacturer),
                      id(source.device?.model), id(source.device?.hardware), id(source.device?.software)]
        let id = nextSource
        nextSource += 1
        sources[source] = id
        var w = EventWriter(kind: .defineSource)
        w.varint(source.device == nil ? 0 : 1)
        for f in fields { w.varint(f) }
        pending.append(w.bytes)
        definitionsPending = true
        return id
    }

    /// The event's bytes and how many of them make its identity (`EventIdentity`).
    ///
    /// A sample's and a correlation's identity is every field (metadata, creation date and beats
    /// included: HealthKit samples are immutable, so a re-export repeats them exactly, and two
    /// foods of one meal differ only in their metadata). A workout's is its type, source, start
    /// and end: newer exports add statistics and events to the same workout.
    package func encode(_ event: VaultEvent) -> (bytes: [UInt8], identityLength: Int) {
        var writer = encodeHead(event)
        let headLength = writer.bytes.count
        encodeRest(event, into: &writer)
        if case .workout = event { return (writer.bytes, headLength) }
        if case .genericRecord = event, let span = writer.bytes.withUnsafeBytes({ EventIdentity.span(of: $0) }) {
            return (writer.bytes, span.length)  // a resource is not part of the identity
        }
        return (writer.bytes, writer.bytes.count)
    }

    /// A sample's bytes, all of them its identity: what `encode(.sample(s))` gives, without
    /// going through the event (the import's hot path), written into `bytes`, whose memory is
    /// reused: an import encodes each sample into the same buffer instead of allocating and
    /// freeing one per sample.
    package func encode(sample s: HealthSample, into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        var writer = EventWriter(continuing: &bytes)
        // The fixed fields (all but metadata and beats) through one buffer on the stack.
        writer.fields(upTo: Self.sampleFixedFieldsLimit) { fields in
            fields.append(EventCoding.version)
            fields.varint(EventCoding.Kind.sample.rawValue)
            sampleIdentity(s, into: &fields)
            sampleExtras(s, into: &fields)
        }
        sampleMetadataAndBeats(s, into: &writer)
        swap(&writer.bytes, &bytes)
    }

    /// The most bytes a sample's fixed fields take: the version, its kind (two bytes at most),
    /// the value's kind, the end's offset flag and the extras' flags, one byte each; and ten
    /// varints of at most 10 bytes (type, source, start's seconds and offset, length, end's
    /// offset, value or category, unit, creation date and its offset).
    static let sampleFixedFieldsLimit = 6 + 10 * 10

    /// An event's leading fields: type, source, span and value for records, everything for the
    /// other kinds; `encodeRest` completes it.
    private func encodeHead(_ event: VaultEvent) -> EventWriter {
        switch event {
        case .vaultCreated(let at, let kdf):
            var w = EventWriter(kind: .vaultCreated)
            w.date(at)
            w.string(kdf)
            return w
        case .passphraseChanged(let at):
            var w = EventWriter(kind: .passphraseChanged)
            w.date(at)
            return w
        case .importRecorded(let at, let record):
            var w = EventWriter(kind: .importRecorded)
            w.date(at)
            w.string(record.file)
            w.string(record.format)
            w.varint(record.added)
            w.varint(record.duplicates)
            w.varint(record.rejected)
            // Only when there were any: other records encode as they always did.
            if record.replaced > 0 { w.varint(record.replaced) }
            return w
        case .goalSet(let goal):
            var w = EventWriter(kind: .goalSet)
            w.date(goal.at)
            w.string(PersistedNames.name(of: goal.ring))
            w.decimal(goal.value)
            w.signed(goal.from.dayNumber)
            return w
        case .sourceOrderSet(let at, let keys):
            var w = EventWriter(kind: .sourceOrderSet)
            w.date(at)
            w.varint(keys.count)
            for key in keys {
                w.string(key.name)
                w.string(PersistedNames.name(of: key.deviceClass))
            }
            return w
        case .recipientAdded(let r):
            var w = EventWriter(kind: .recipientAdded)
            w.date(r.at)
            w.string(r.name)
            w.string(Data(r.publicKey).base64EncodedString())
            return w
        case .consentGranted(let g):
            var w = EventWriter(kind: .consentGranted)
            w.date(g.at)
            w.string(g.id)
            w.string(g.recipient)
            w.varint(g.categories.count)
            for c in g.categories { w.string(PersistedNames.name(of: c)) }
            for day in [g.from, g.to, g.expires] {
                w.varint(day == nil ? 0 : 1)
                if let day { w.signed(day.dayNumber) }
            }
            w.string(PersistedNames.name(of: g.granularity))
            w.varint(g.purpose == nil ? 0 : 1)
            if let purpose = g.purpose { w.string(purpose) }
            // Only when kept: grants without it encode as they always did.
            if let types = g.otherTypes {
                w.varint(types.count)
                for type in types { w.string(type) }
            }
            return w
        case .consentRevoked(let r):
            var w = EventWriter(kind: .consentRevoked)
            w.date(r.at)
            w.string(r.recipient)
            w.varint(r.categories == nil ? 0 : 1)
            if let categories = r.categories {
                w.varint(categories.count)
                for c in categories { w.string(PersistedNames.name(of: c)) }
            }
            return w
        case .identityRecorded(let i):
            var w = EventWriter(kind: .identityRecorded)
            w.date(i.at)
            w.string(PersistedNames.name(of: i.reason))
            w.string(Data(i.signingKey).base64EncodedString())
            w.string(Data(i.encryptionKey).base64EncodedString())
            return w
        case .masterKeyRotated(let at):
            var w = EventWriter(kind: .masterKeyRotated)
            w.date(at)
            return w
        case .companionPaired(let p):
            var w = EventWriter(kind: .companionPaired)
            w.date(p.at)
            w.string(p.name)
            w.varint(p.tokenHash.count)
            w.bytes.append(contentsOf: p.tokenHash)
            return w
        case .companionRevoked(let r):
            var w = EventWriter(kind: .companionRevoked)
            w.date(r.at)
            w.string(r.name)
            return w
        case .trackerDefined(let t):
            var w = EventWriter(kind: .trackerDefined)
            w.date(t.at)
            w.string(t.name)
            w.varint(t.levels.count)
            for level in t.levels {
                w.string(level.name)
                w.decimal(level.value)
            }
            w.varint(t.success.count)
            for level in t.success { w.string(level) }
            w.varint(t.dayStartsMinutes)
            w.varint(t.healthKitType == nil ? 0 : 1)
            if let type = t.healthKitType { w.string(type) }
            return w
        case .trackerEntry(let e):
            var w = EventWriter(kind: .trackerEntry)
            w.string(e.tracker)
            w.string(e.level)
            w.decimal(e.value)
            w.timestamp(e.at)
            w.signed(e.day.dayNumber)
            w.string(PersistedNames.name(of: e.category))
            return w
        case .exerciseDefined(let d):
            var w = EventWriter(kind: .exerciseDefined)
            w.date(d.at)
            Self.exercise(d.exercise, into: &w)
            return w
        case .practiceLogged(let p):
            var w = EventWriter(kind: .practiceLogged)
            Self.exercise(p.exercise, into: &w)
            w.varint(p.repetitions)
            // Seconds plus one; 0 when no duration was given.
            w.varint(p.seconds.map { $0 + 1 } ?? 0)
            w.timestamp(p.at)
            return w
        case .sampleSuperseded(let s):
            var w = EventWriter(kind: .sampleSuperseded)
            w.varint(s.replacedIndex)
            var sample = EventWriter(kind: .sample)
            sampleIdentity(s.replaced, into: &sample)
            sampleRest(s.replaced, into: &sample)
            // The sample's fields without its version and kind bytes.
            w.bytes.append(contentsOf: sample.bytes[2...])
            return w
        case .tailCut(let c):
            var w = EventWriter(kind: .tailCut)
            w.date(c.at)
            w.varint(c.offset)
            w.varint(c.length)
            w.string(c.digest)
            w.string(c.keptAs)
            return w
        case .erased(let e):
            var w = EventWriter(kind: .erased)
            w.date(e.at)
            w.string(e.eraseID)
            w.varint(e.labels.count)
            for label in e.labels { w.string(label) }
            w.varint(e.events)
            return w
        case .exportPerformed(let e):
            var w = EventWriter(kind: .exportPerformed)
            w.date(e.at)
            w.string(e.recipient)
            w.varint(e.consentIDs.count)
            for id in e.consentIDs { w.string(id) }
            w.varint(e.counts.count)
            for (category, n) in e.counts.sorted(by: { $0.key < $1.key }) {
                w.string(category)
                w.varint(n)
            }
            w.string(e.bundleHash)
            return w
        case .sample(let s):
            var w = EventWriter(kind: .sample)
            sampleIdentity(s, into: &w)
            return w
        case .workout(let x):
            var w = EventWriter(kind: .workout)
            w.varint(id(x.activityType))
            w.varint(id(x.source))
            span(x.start, x.end, into: &w)
            return w
        case .route(let route):
            return encodeRoute(route)
        case .activitySummary(let a):
            var w = EventWriter(kind: .activitySummary)
            w.signed(a.day)
            let values = [a.activeEnergy, a.activeEnergyGoal, a.moveTime, a.moveTimeGoal, a.exerciseTime, a.exerciseTimeGoal, a.standHours, a.standHoursGoal]
            var flags = 0
            for (i, v) in values.enumerated() where v != nil { flags |= 1 << i }
            w.varint(flags)
            for v in values { if let v { w.decimal(v) } }
            return w
        case .characteristics(let entries):
            var w = EventWriter(kind: .characteristics)
            metadata(entries, into: &w)
            return w
        case .correlation(let c):
            // Kind 22: the whole event is its identity (kind 11, written before, kept only the prefix).
            var w = EventWriter(kind: .correlationWhole)
            w.varint(id(c.type))
            w.varint(id(c.source))
            span(c.start, c.end, into: &w)
            return w
        case .genericRecord(let g):
            if let resource = g.attributes.last, resource.key == GenericRecord.resourceKey {
                var w = EventWriter(kind: .genericRecordWithResource)
                w.varint(id(g.element))
                metadata(Array(g.attributes.dropLast()), into: &w)
                w.string(resource.value)
                return w
            }
            var w = EventWriter(kind: .genericRecord)
            w.varint(id(g.element))
            metadata(g.attributes, into: &w)
            return w
        case .electrocardiogram(let ecg):
            var w = EventWriter(kind: .electrocardiogram)
            w.timestamp(ecg.recorded)
            w.varint(id(ecg.unit))
            w.varint(ecg.sampleRate == nil ? 0 : 1)
            if let rate = ecg.sampleRate { w.decimal(DecimalValue(double: rate)) }
            metadata(ecg.fields, into: &w)
            w.varint(ecg.millivoltages.count)
            var previous: Int64 = 0
            for v in ecg.millivoltages {
                w.signed(v &- previous)
                previous = v
            }
            return w
        }
    }

    /// Appends what follows the identity: a sample's metadata and beats, a workout's totals,
    /// events, statistics and routes, a correlation's metadata; nothing for other kinds.
    private func encodeRest(_ event: VaultEvent, into w: inout EventWriter) {
        switch event {
        case .sample(let s):
            sampleRest(s, into: &w)
        case .workout(let x):
            workoutRest(x, into: &w)
        case .correlation(let c):
            w.varint(c.creationDate == nil ? 0 : 1)
            if let created = c.creationDate { creationDate(created, after: c.end, into: &w) }
            metadata(Self.canonicalOrder(c.metadata), into: &w)
        default:
            break
        }
    }

    /// A sample's metadata, beats and creation date, after its identifying head.
    private func sampleRest(_ s: HealthSample, into w: inout EventWriter) {
        sampleExtras(s, into: &w)
        sampleMetadataAndBeats(s, into: &w)
    }

    /// Which extras follow, and the creation date.
    private func sampleExtras<W: PrimitiveWriter>(_ s: HealthSample, into w: inout W) {
        w.varint(EventCoding.SampleExtras.wholeIdentity | (s.metadata.isEmpty ? 0 : EventCoding.SampleExtras.metadata)
                 | (s.beats.isEmpty ? 0 : EventCoding.SampleExtras.beats) | (s.creationDate == nil ? 0 : EventCoding.SampleExtras.creationDate))
        if let created = s.creationDate { creationDate(created, after: s.end, into: &w) }
    }

    /// The metadata and beats the extras announced.
    private func sampleMetadataAndBeats(_ s: HealthSample, into w: inout EventWriter) {
        if !s.metadata.isEmpty { metadata(Self.canonicalOrder(s.metadata), into: &w) }
        if !s.beats.isEmpty {
            w.varint(s.beats.count)
            for beat in s.beats {
                w.decimal(beat.bpm)
                w.string(beat.time)
            }
        }
    }

    /// A creation date as seconds after the record's end (usually a few: one or two bytes), and
    /// its UTC offset only when it differs from the end's.
    private func creationDate<W: PrimitiveWriter>(_ created: HealthTimestamp, after end: HealthTimestamp, into w: inout W) {
        let delta = created.seconds &- end.seconds
        let zigzag = ZigZag.encode(delta)
        if created.utcOffset == end.utcOffset {
            w.varint(zigzag << 1)
        } else {
            w.varint(zigzag << 1 | 1)
            w.utcOffset(created.utcOffset)
        }
    }

    private func span<W: PrimitiveWriter>(_ start: HealthTimestamp, _ end: HealthTimestamp, into w: inout W) {
        w.timestamp(start)
        w.signed(end.seconds - start.seconds)
        if end.utcOffset == start.utcOffset {
            w.varint(0)
        } else {
            w.varint(1)
            w.utcOffset(end.utcOffset)
        }
    }

    /// Metadata is a dictionary (HealthKit's order means nothing and may change between
    /// exports): stored by key, then value, so that the same sample always encodes the same.
    package static func canonicalOrder(_ entries: [MetadataEntry]) -> [MetadataEntry] {
        guard entries.count > 1 else { return entries }
        var sorted = true
        for i in 1..<entries.count where !Self.precedes(entries[i - 1], entries[i]) { sorted = false; break }
        return sorted ? entries : entries.sorted(by: Self.precedes)
    }

    private static func precedes(_ a: MetadataEntry, _ b: MetadataEntry) -> Bool {
        a.key != b.key ? a.key < b.key : a.value <= b.value
    }

    /// Values up to this many bytes are interned; longer ones (sync identifiers, UUIDs, links)
    /// are nearly always unique and go inline, so the string table does not grow with the data.
    package static let internedValueLimit = 16

    private func metadata(_ entries: [MetadataEntry], into w: inout EventWriter) {
        w.varint(entries.count)
        for e in entries {
            w.varint(id(e.key))
            // Even: an interned value's id; odd: an inline value's length, then its bytes.
            if e.value.utf8.count <= Self.internedValueLimit {
                w.varint(id(e.value) << 1)
            } else {
                w.varint(UInt64(e.value.utf8.count) << 1 | 1)
                w.bytes.append(contentsOf: e.value.utf8)
            }
        }
    }

    private func sampleIdentity<W: PrimitiveWriter>(_ s: HealthSample, into w: inout W) {
        // Only the value's kind here: whether metadata or beats follow is not part of the identity.
        switch s.value {
        case .none: w.varint(0)
        case .quantity: w.varint(1)
        case .category: w.varint(2)
        }
        w.varint(id(s.type))
        w.varint(id(s.source))
        span(s.start, s.end, into: &w)
        switch s.value {
        case .none: break
        case .quantity(let value, let unit):
            w.decimal(value)
            w.varint(id(unit))
        case .category(let value):
            w.varint(id(value))
        }
    }

    private func workoutRest(_ x: Workout, into w: inout EventWriter) {
        let totals = [x.duration, x.totalDistance, x.totalEnergy]
        var flags = 0
        for (i, v) in totals.enumerated() where v != nil { flags |= 1 << i }
        w.varint(flags)
        for v in totals { if let v { w.decimal(v) } }
        metadata(x.metadata, into: &w)
        w.varint(x.events.count)
        for e in x.events {
            w.varint(id(e.type))
            w.timestamp(e.date)
            w.varint(e.duration == nil ? 0 : 1)
            if let d = e.duration { w.decimal(d) }
        }
        w.varint(x.statistics.count)
        for s in x.statistics {
            w.varint(id(s.type))
            let parts: [Any?] = [s.start, s.end, s.sum, s.average, s.minimum, s.maximum, s.unit]
            var f = 0
            for (i, p) in parts.enumerated() where p != nil { f |= 1 << i }
            w.varint(f)
            if let t = s.start { w.timestamp(t) }
            if let t = s.end { w.timestamp(t) }
            for d in [s.sum, s.average, s.minimum, s.maximum] { if let d { w.decimal(d) } }
            if let u = s.unit { w.varint(id(u)) }
        }
        w.varint(x.routes.count)
        for r in x.routes {
            w.varint(id(r.source))
            var f = 0
            if r.start != nil { f |= 1 }
            if r.end != nil { f |= 2 }
            if r.filePath != nil { f |= 4 }
            w.varint(f)
            if let t = r.start { w.timestamp(t) }
            if let t = r.end { w.timestamp(t) }
            if let p = r.filePath { w.varint(id(p)) }
            metadata(r.metadata, into: &w)
        }
    }

    /// A route value in fixed point, clamped to ±10¹² units (importers keep values far inside
    /// physical ranges; this only guarantees the conversion cannot trap).
    package static func fixedPoint(_ value: Double, _ scale: Double) -> Int64 {
        let scaled = (value * scale).rounded()
        guard scaled.isFinite else { return 0 }
        return Int64(max(-1e12, min(1e12, scaled)))
    }

    /// Route points, delta-encoded: seconds, 1e-7 degrees, millimetres, mm/s, centidegrees.
    private func encodeRoute(_ r: WorkoutRoute) -> EventWriter {
        var w = EventWriter(kind: .route)
        w.timestamp(r.workoutStart)
        w.varint(id(r.filePath))
        w.varint(r.points.count)
        var previous = (time: r.workoutStart.seconds, lat: Int64(0), lon: Int64(0), alt: Int64(0))
        for p in r.points {
            let lat = Self.fixedPoint(p.latitude, 1e7), lon = Self.fixedPoint(p.longitude, 1e7)
            var f = 0
            for (i, v) in [p.altitude, p.speed, p.course, p.horizontalAccuracy, p.verticalAccuracy].enumerated() where v != nil { f |= 1 << i }
            w.varint(f)
            w.signed(p.time - previous.time)
            w.signed(lat - previous.lat)
            w.signed(lon - previous.lon)
            if let a = p.altitude {
                let mm = Self.fixedPoint(a, 1000)
                w.signed(mm - previous.alt)
                previous.alt = mm
            }
            if let v = p.speed { w.signed(Self.fixedPoint(v, 1000)) }
            if let v = p.course { w.signed(Self.fixedPoint(v, 100)) }
            if let v = p.horizontalAccuracy { w.signed(Self.fixedPoint(v, 1000)) }
            if let v = p.verticalAccuracy { w.signed(Self.fixedPoint(v, 1000)) }
            previous = (p.time, lat, lon, previous.alt)
        }
        return w
    }
}

extension EventEncoder {
    /// An exercise as both training kinds write it: name, body parts (their names), motion.
    static func exercise(_ e: Exercise, into w: inout EventWriter) {
        w.string(e.name)
        w.varint(e.bodyParts.count)
        for part in e.bodyParts { w.string(part.rawValue) }
        w.string(e.motion.rawValue)
    }
}
