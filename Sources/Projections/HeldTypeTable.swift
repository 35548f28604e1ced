import HealthModel

/// The `held_types` and `held_days` tables: how many records of each type (and unit) the vault
/// holds per local day, what `types` answers from. Every data event counts once, on the day it
/// starts, under the category its data key carries, so erasing a category's month removes
/// exactly its rows.
struct HeldTypeTable {
    /// The day key of undated records (`Me`), kept in `held_types.undated`.
    static let undatedDay = Int64.min

    struct Key: Hashable {
        var type: String
        var unit: String
    }

    let db: SQLiteConnection
    private var ids: [Key: Int64] = [:]
    private var last: (key: Key, id: Int64)?

    init(db: SQLiteConnection) throws {
        self.db = db
        try loadIDs()
    }

    private mutating func loadIDs() throws {
        ids = [:]
        last = nil
        let statement = try db.prepare("SELECT id, type, unit FROM held_types")
        while try statement.step() { ids[Key(type: statement.text(1) ?? "", unit: statement.text(2) ?? "")] = statement.int64(0) }
    }

    /// The id of a type and unit, made on first use.
    mutating func id(type: String, unit: String, category: HealthCategory) throws -> Int64 {
        if let last, last.key.type == type, last.key.unit == unit { return last.id }
        let key = Key(type: type, unit: unit)
        if let known = ids[key] {
            last = (key, known)
            return known
        }
        let insert = try db.prepare("INSERT INTO held_types(type, unit, category) VALUES (?, ?, ?)")
        try insert.bind(1, type)
        try insert.bind(2, unit)
        try insert.bind(3, category.rawValue)
        try insert.run()
        let id = db.lastInsertRowID
        ids[key] = id
        last = (key, id)
        return id
    }

    /// What is pending for one type and day: records and the minutes they last.
    struct Tally {
        var count: Int64 = 0
        var minutes: Double = 0

        mutating func add(count n: Int64, minutes m: Double) {
            count += n
            minutes += m
        }
    }

    /// Adds counts (and minutes) per (type id, day).
    func add(_ counts: [ProjectionUpdate.DayKey: Tally]) throws {
        let dated = try db.prepare("""
            INSERT INTO held_days(type_id, day, count, minutes) VALUES (?, ?, ?, ?)
            ON CONFLICT(type_id, day) DO UPDATE SET count = count + excluded.count, minutes = minutes + excluded.minutes
            """)
        let undated = try db.prepare("UPDATE held_types SET undated = undated + ? WHERE id = ?")
        for (key, tally) in counts {
            if key.day == Self.undatedDay {
                try undated.bind(1, tally.count)
                try undated.bind(2, key.metric)
                try undated.run()
            } else {
                try dated.bind(1, key.metric)
                try dated.bind(2, key.day)
                try dated.bind(3, tally.count)
                try dated.bind(4, tally.minutes)
                try dated.run()
            }
        }
    }

    /// Removes what a category's erased month (or its undated records) counted.
    func purge(_ erased: ErasedMonth) throws {
        let category = erased.category.rawValue
        guard let month = erased.month else {
            let reset = try db.prepare("UPDATE held_types SET undated = 0 WHERE category = ?")
            try reset.bind(1, category)
            try reset.run()
            return
        }
        let remove = try db.prepare("""
            DELETE FROM held_days WHERE day BETWEEN ? AND ? AND type_id IN (SELECT id FROM held_types WHERE category = ?)
            """)
        try remove.bind(1, month.days.lowerBound.dayNumber)
        try remove.bind(2, month.days.upperBound.dayNumber)
        try remove.bind(3, category)
        try remove.run()
    }

    /// Drops types nothing is counted under any more.
    mutating func removeEmpty() throws {
        try db.execute("""
            DELETE FROM held_types WHERE undated = 0 AND NOT EXISTS (SELECT 1 FROM held_days WHERE type_id = held_types.id)
            """)
        try loadIDs()
    }
}
