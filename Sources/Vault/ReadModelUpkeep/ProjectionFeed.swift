import HealthModel
import Projections
import VaultEvents

/// Maps vault events to the read models' inputs: cumulative and discrete quantity samples, stand
/// hours, Apple's ring summaries, goals and the source order; every other data event is counted
/// for `types`. Audit events teach the read models nothing and map to nil.
struct ProjectionFeed {
    private var deviceClasses: [String: DeviceClass] = [:]
    /// Source keys by source id, per decoder (each data key has its own table), and those of
    /// the decoder met last. The decoders met are held as long as the feed lives (`decodersMet`),
    /// so that none is freed and its identifier given to another decoder: an import's feed meets
    /// decoders made for each decision of its identities set aside, and lets them go.
    private var sourceKeysByTable: [ObjectIdentifier?: [SourceKey?]] = [:]
    private var decodersMet: [ObjectIdentifier: EventDecoder] = [:]
    private var keysOfTable: (table: ObjectIdentifier?, keys: [SourceKey?]) = (nil, [])
    /// Each type's aggregation style, by the type string's identity (a feed is one thread's).
    private let styles = StringMemo<AggregationStyle>()
    /// A frame holds one category's month, a few types and devices interleaved: the last ones
    /// are compared before any hashing.
    private var recentModels: [(model: String?, deviceClass: DeviceClass)] = []
    /// Source keys by the sources' instances (an import's samples come from its parser's few).
    private let sourceKeys = SourceMemo<SourceKey>()

    static let standHour = ProjectionInput.standHourType
    static let stood = "HKCategoryValueAppleStandHourStood"

    mutating func input(for event: VaultEvent) -> ProjectionInput? {
        switch event {
        case .sample(let s):
            return input(for: s)
        case .sampleSuperseded(let s):
            var withdrawal = Withdrawal(contentHash: SampleContent.hash(s.replaced), category: s.replaced.category, day: Self.day(s.replaced.start))
            let replaced = input(for: s.replaced)
            if case .annotated(_, let metadata)? = replaced { withdrawal.metadata = metadata }
            switch replaced?.withoutMetadata {
            case .cumulative(let c): withdrawal.cumulative = c
            case .discrete(let d): withdrawal.discrete = d
            default: break
            }
            return .withdrawn(withdrawal)
        case .workout(let w):
            var item = Self.item(w)
            item.source = sourceKey(w.source)
            return Self.annotating(.workout(item), type: w.activityType, category: .workouts, start: w.start, metadata: w.metadata)
        case .practiceLogged(let p):
            return .practice(PracticeItem(day: p.day, at: p.at.seconds, exercise: p.exercise.name, bodyParts: p.exercise.bodyParts,
                                          motion: p.exercise.motion, repetitions: p.repetitions, seconds: p.seconds))
        case .route(let r):
            return .recorded(RecordedItem(type: Self.routeType, category: .location, day: Self.day(r.workoutStart)))
        case .characteristics:
            return .recorded(RecordedItem(type: "Me", category: .profile, day: nil))
        case .correlation(let c):
            let category = HealthCategory.of(type: c.type)
            return Self.annotating(.recorded(RecordedItem(type: c.type, category: category, day: Self.day(c.start))),
                                   type: c.type, category: category, start: c.start, metadata: c.metadata)
        case .electrocardiogram(let e):
            return .recorded(RecordedItem(type: Electrocardiogram.type, category: .heart, day: Self.day(e.recorded),
                                          minutes: Double(e.end.seconds - e.recorded.seconds) / 60))
        case .genericRecord(let g):
            guard let label = DataLabel.of(event) else { return nil }
            let type = g.attributes.first { $0.key == "type" }?.value ?? g.element
            return .recorded(RecordedItem(type: type, category: label.category, day: DataLabel.day(of: g)))
        case .activitySummary(let a):
            return .appleRings(AppleRings(
                day: LocalDay(dayNumber: a.day), move: a.activeEnergy?.double, moveGoal: a.activeEnergyGoal?.double,
                exercise: a.exerciseTime?.double, exerciseGoal: a.exerciseTimeGoal?.double,
                stand: a.standHours?.double, standGoal: a.standHoursGoal?.double))
        case .goalSet(let goal):
            return .goalSet(ring: goal.ring, value: goal.value.double, from: goal.from)
        case .sourceOrderSet(_, let keys):
            return .sourceOrder(keys)
        case .erased(let record):
            return .erased(Self.erasedMonths(labels: record.labels))
        default:
            return nil
        }
    }

    /// A sample's input: what `input(for: .sample(s))` gives, without going through the event.
    mutating func input(for s: HealthSample) -> ProjectionInput? {
        sampleInput(type: s.type, start: s.start, end: s.end, value: s.value, source: sourceKey(s.source),
                    metadata: s.metadata, created: s.creationDate)
    }

    /// `input`, with the record's metadata when it has any (`ProjectionInput.annotated`).
    static func annotating(_ input: ProjectionInput?, type: String, category: HealthCategory, start: HealthTimestamp,
                           metadata: [MetadataEntry]) -> ProjectionInput? {
        guard let input, !metadata.isEmpty else { return input }
        return .annotated(input, RecordMetadata(type: type, category: category, day: day(start), entries: metadata))
    }

    /// The category-months of erased keys' labels (`heart/2024-03`, `profile/undated`).
    static func erasedMonths(labels: [String]) -> [ErasedMonth] {
        labels.compactMap { text in
            guard let label = DataLabel(bytes: Array(text.utf8)) else { return nil }
            return ErasedMonth(category: label.category, month: label.month)
        }
    }

    /// The input of a sample from the parts the read models use (`EventDecoder.sampleHead`
    /// reads only these), with its metadata when it has any.
    mutating func sampleInput(type: String, start: HealthTimestamp, end: HealthTimestamp, value sampleValue: SampleValue,
                              source: SourceKey, metadata: [MetadataEntry], created: HealthTimestamp?) -> ProjectionInput? {
        let input = figureInput(type: type, start: start, end: end, value: sampleValue, source: source,
                                metadataDigest: MetadataDigest.of(metadata), created: created)
        // Most samples have no metadata: their type's category is not looked up (it hashes the type).
        guard !metadata.isEmpty else { return input }
        return Self.annotating(input, type: type, category: HealthCategory.of(type: type), start: start, metadata: metadata)
    }

    private mutating func figureInput(type: String, start: HealthTimestamp, end: HealthTimestamp, value sampleValue: SampleValue,
                                      source: SourceKey, metadataDigest: UInt32, created: HealthTimestamp?) -> ProjectionInput? {
        switch sampleValue {
        case .quantity(let stored, let storedUnit):
            var (value, unit) = (stored.double, storedUnit)
            guard value.isFinite else { return nil }
            // Read models hold the units people read: g of protein, mg/dL of glucose.
            if unit == "kg" || unit.hasPrefix("mmol<"), let reading = ReadingUnits.reading(type: type, unit: unit) {
                (value, unit) = (reading.factor.applied(to: value), reading.unit)
            }
            if style(of: type) == .cumulative {
                return .cumulative(CumulativeSample(
                    metric: type, unit: unit, source: source, start: start.seconds,
                    end: end.seconds, utcOffset: start.utcOffset, value: value,
                    metadataDigest: metadataDigest, created: created?.seconds))
            }
            return .discrete(DiscreteSample(metric: type, unit: unit, start: start.seconds,
                                            utcOffset: start.utcOffset, value: value))
        case .category(let value) where type == Self.standHour:
            return .standHour(start: start.seconds, utcOffset: start.utcOffset, stood: value == Self.stood)
        case .category(let value) where type == ProjectionInput.sleepType:
            if let stage = SleepStage(value: value) {
                return .sleep(SleepSegment(start: start, end: end, stage: stage, source: source))
            }
            return .recorded(RecordedItem(type: type, category: HealthCategory.of(type: type), day: Self.day(start)))
        default:
            let minutes = Double(max(0, end.seconds - start.seconds)) / 60
            return .recorded(RecordedItem(type: type, category: HealthCategory.of(type: type), day: Self.day(start), minutes: minutes))
        }
    }

    /// The input of a sample read by `EventDecoder.sampleHead`: its source's key is taken once
    /// per source of each decoder's table.
    mutating func input(for head: EventDecoder.SampleHead, of decoder: EventDecoder) -> ProjectionInput? {
        let source = sourceKey(head.sourceID, of: decoder)
        return sampleInput(type: head.type, start: head.start, end: head.end, value: head.value, source: source,
                           metadata: head.metadata, created: head.created)
    }

    private mutating func sourceKey(_ id: Int, of decoder: EventDecoder) -> SourceKey {
        let table = ObjectIdentifier(decoder)
        if table != keysOfTable.table {
            sourceKeysByTable[keysOfTable.table] = keysOfTable.keys
            keysOfTable = (table, sourceKeysByTable[table] ?? [])
            if decodersMet[table] == nil { decodersMet[table] = decoder }
        }
        if id < keysOfTable.keys.count, let key = keysOfTable.keys[id] { return key }
        let key = sourceKey(decoder.sources[id])
        if id >= keysOfTable.keys.count { keysOfTable.keys += repeatElement(nil, count: id + 1 - keysOfTable.keys.count) }
        keysOfTable.keys[id] = key
        return key
    }

    /// A workout's figures: its own totals, else what Apple's statistics of it add up to (newer
    /// exports give energy and distance only there); minutes from its span when it has no duration.
    static func item(_ w: Workout) -> WorkoutItem {
        func statisticsSum(_ matches: (String) -> Bool, unit: String) -> Double? {
            let sums = w.statistics.filter { matches($0.type) && $0.unit == unit }.compactMap { $0.sum?.double }
            return sums.isEmpty ? nil : sums.reduce(0, +)
        }
        let minutes = w.duration?.double ?? Double(w.end.seconds - w.start.seconds) / 60
        let energy = w.totalEnergy?.double ?? statisticsSum({ $0 == "HKQuantityTypeIdentifierActiveEnergyBurned" }, unit: "kcal")
        let distance = w.totalDistance?.double ?? statisticsSum({ $0.hasPrefix("HKQuantityTypeIdentifierDistance") }, unit: "m")
        return WorkoutItem(type: w.activityType, start: w.start.seconds, utcOffset: w.start.utcOffset,
                           minutes: minutes.isFinite ? minutes : 0, energy: energy.flatMap { $0.isFinite ? $0 : nil },
                           distance: distance.flatMap { $0.isFinite ? $0 : nil }, end: w.end.seconds)
    }

    /// The type `types` lists workout routes under.
    static let routeType = "HKWorkoutRouteTypeIdentifier"

    /// The local day an instant starts, in the offset it was recorded with (the day its data
    /// key's month is taken from).
    static func day(_ t: HealthTimestamp) -> LocalDay { LocalDay(instant: t.seconds, utcOffset: t.utcOffset) }

    /// The priority key of a source: its name, and its class from the device model. Only the
    /// model is looked up (the last few compared first: decoded strings of one table share their
    /// storage, so a hit costs a pointer comparison); a source's seven strings are never hashed.
    mutating func sourceKey(_ source: HealthSource) -> SourceKey {
        let keys = sourceKeys
        return keys.value(for: source) { SourceKey(name: $0.name, deviceClass: deviceClass(model: $0.deviceModel)) }
    }

    private mutating func deviceClass(model: String?) -> DeviceClass {
        for recent in recentModels where recent.model == model { return recent.deviceClass }
        let deviceClass = model.map { known in deviceClasses[known] ?? DeviceClass(model: known) } ?? .other
        if let model { deviceClasses[model] = deviceClass }
        if recentModels.count == 8 { recentModels.removeLast() }
        recentModels.insert((model, deviceClass), at: 0)
        return deviceClass
    }

    private func style(of type: String) -> AggregationStyle {
        styles.value(for: type, AggregationStyle.of(type:))
    }
}
