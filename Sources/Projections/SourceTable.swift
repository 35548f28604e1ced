import HealthModel

/// The sources the read models have seen, their ids, and the order that decides which one counts
/// when several cover the same time.
///
/// The order: the person's list first (`sources` command), then by device class (Apple Watch,
/// iPhone, other), then by name; ids (first appearance) break the last ties.
struct SourceTable {
    let db: SQLiteConnection
    private(set) var keys: [Int32: SourceKey] = [:]
    private var ids: [SourceKey: Int32] = [:]
    private var order: [SourceKey] = []
    /// Samples counted since the last save, by source id: ids below `directIDs` (all of them in
    /// practice: one per source, from 1) index an array, others a dictionary.
    private var sampleDelta: [Int64] = []
    private var otherSampleDelta: [Int32: Int64] = [:]
    private static let directIDs = 4096
    /// The last few sources looked up, the newest last: the phone's and the watch's samples
    /// interleave, and a one-entry memo hashed the source's name on most samples (measured).
    private var recentLookups: [(key: SourceKey, id: Int32)] = []

    init(db: SQLiteConnection) throws {
        self.db = db
        let all = try db.prepare("SELECT id, name, device_class FROM sources")
        while try all.step() {
            let key = SourceKey(name: all.text(1) ?? "", deviceClass: DeviceClass(name: all.text(2) ?? "") ?? .other)
            keys[Int32(all.int64(0))] = key
            ids[key] = Int32(all.int64(0))
        }
        let ordered = try db.prepare("SELECT source_id FROM source_order ORDER BY position")
        while try ordered.step() {
            if let key = keys[Int32(ordered.int64(0))] { order.append(key) }
        }
    }

    /// The id of a source, made on first sight. Counts a sample for it unless `counting` is false.
    mutating func id(for key: SourceKey, counting: Bool = true) throws -> Int32 {
        let step: Int64 = counting ? 1 : 0
        // Samples come in runs of one source: the last one is checked before any hashing.
        for recent in recentLookups where recent.key == key {
            addSamples(step, to: recent.id)
            return recent.id
        }
        if let id = ids[key] {
            if recentLookups.count == 4 { recentLookups.removeFirst() }
            recentLookups.append((key, id))
            addSamples(step, to: id)
            return id
        }
        let statement = try db.prepare("INSERT INTO sources(name, device_class) VALUES (?, ?)")
        try statement.bind(1, key.name)
        try statement.bind(2, key.deviceClass.description)
        try statement.run()
        let id = Int32(db.lastInsertRowID)
        ids[key] = id
        keys[id] = key
        addSamples(step, to: id)
        return id
    }

    private mutating func addSamples(_ count: Int64, to id: Int32) {
        let index = Int(id)
        guard index >= 0, index < Self.directIDs else {
            otherSampleDelta[id, default: 0] += count
            return
        }
        if index >= sampleDelta.count { sampleDelta += [Int64](repeating: 0, count: index + 1 - sampleDelta.count) }
        sampleDelta[index] += count
    }

    /// Replaces the person's order. Sources not seen yet are recorded, so the order holds for
    /// them when their samples arrive.
    mutating func setOrder(_ newOrder: [SourceKey]) throws {
        try db.execute("DELETE FROM source_order")
        let insert = try db.prepare("INSERT INTO source_order(position, source_id) VALUES (?, ?)")
        var seen = Set<SourceKey>()
        order = []
        for key in newOrder where seen.insert(key).inserted {
            let id = try id(for: key)
            addSamples(-1, to: id)
            try insert.bind(1, Int64(order.count))
            try insert.bind(2, Int64(id))
            try insert.run()
            order.append(key)
        }
    }

    /// Rank by source id (lower counts first), as an array indexed by id.
    func ranks() -> [Int] {
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        let sorted = keys.sorted { a, b in
            let pa = position[a.value] ?? Int.max, pb = position[b.value] ?? Int.max
            if pa != pb { return pa < pb }
            if a.value.deviceClass != b.value.deviceClass { return a.value.deviceClass < b.value.deviceClass }
            if a.value.name != b.value.name { return a.value.name < b.value.name }
            return a.key < b.key
        }
        var rank = [Int](repeating: Int.max, count: Int(keys.keys.max() ?? 0) + 1)
        for (r, entry) in sorted.enumerated() { rank[Int(entry.key)] = r }
        return rank
    }

    /// Adds the samples counted since the last save to the table.
    /// Takes back the count of one sample of `id` (an erased one).
    mutating func uncount(_ id: Int32) {
        addSamples(-1, to: id)
    }

    /// Saves the counts, then forgets the sources no sample and no order names any more, as a
    /// rebuild would never have seen them.
    mutating func removeUnused() throws {
        try saveSampleCounts()
        let unused = try db.prepare("SELECT id FROM sources WHERE samples <= 0 AND id NOT IN (SELECT source_id FROM source_order)")
        var ids: [Int32] = []
        while try unused.step() { ids.append(Int32(unused.int64(0))) }
        let remove = try db.prepare("DELETE FROM sources WHERE id = ?")
        for id in ids {
            try remove.bind(1, Int64(id))
            try remove.run()
            if let key = keys.removeValue(forKey: id) { self.ids[key] = nil }
            recentLookups.removeAll { $0.id == id }
        }
    }

    mutating func saveSampleCounts() throws {
        let statement = try db.prepare("UPDATE sources SET samples = samples + ? WHERE id = ?")
        let deltas = sampleDelta.enumerated().map { (Int64($0.offset), $0.element) } + otherSampleDelta.map { (Int64($0.key), $0.value) }
        for (id, delta) in deltas where delta != 0 {
            try statement.bind(1, delta)
            try statement.bind(2, id)
            try statement.run()
        }
        sampleDelta = []
        otherSampleDelta = [:]
    }
}
