/// What the read models say, table by table, in a form two copies can be compared in: the rows
/// of each table by name rather than by the ids a file assigned in the order it met things (an
/// incremental file and a rebuild number metrics and sources differently), floating figures
/// rounded to a millionth (sums added in another order differ in their last bits). `verify`
/// compares a file's contents with a rebuild's from the log.
extension ReadModels {
    /// Each table's canonical query.
    static let canonicalQueries: [(table: String, sql: String)] = [
        ("daily", """
            SELECT m.identifier, m.unit, d.day, d.samples, round(d.total, 6), d.micro_sum, round(d.min, 6), round(d.max, 6)
            FROM daily d JOIN metrics m ON m.id = d.metric_id ORDER BY 1, 2, 3
            """),
        ("rings", "SELECT day, round(move, 6), round(move_goal, 6), round(exercise, 6), round(exercise_goal, 6), stand, round(stand_goal, 6) FROM rings ORDER BY day"),
        ("apple_rings", "SELECT day, move, move_goal, exercise, exercise_goal, stand, stand_goal FROM apple_rings ORDER BY day"),
        ("stand_hours", "SELECT day, hours FROM stand_hours ORDER BY day"),
        ("held", """
            SELECT t.type, t.unit, t.category, t.undated, h.day, h.count, round(h.minutes, 6)
            FROM held_types t LEFT JOIN held_days h ON h.type_id = t.id ORDER BY 1, 2, 5
            """),
        ("sleep", """
            SELECT g.night, g.start, g.start_offset, g.end, g.end_offset, g.stage, s.name, s.device_class
            FROM sleep_segments g JOIN sources s ON s.id = g.source_id ORDER BY 1, 2, 4, 6, 7, 8
            """),
        ("workouts", """
            SELECT w.day, w.start, w.type, round(w.minutes, 6), round(w.energy, 6), round(w.distance, 6), w.end, s.name, s.device_class
            FROM workouts w LEFT JOIN sources s ON s.id = w.source_id ORDER BY 1, 2, 3, 4, 8, 9
            """),
        ("practices", "SELECT day, at, exercise, body_parts, motion, repetitions, seconds FROM practices ORDER BY 1, 2, 3, 4, 5, 6, 7"),
        ("sources", "SELECT name, device_class, samples FROM sources ORDER BY 1, 2"),
        ("source_order", "SELECT o.position, s.name, s.device_class FROM source_order o JOIN sources s ON s.id = o.source_id ORDER BY 1"),
        ("goal_changes", "SELECT ring, value, from_day FROM goal_changes ORDER BY 3, 1, 2"),
        ("superseded", "SELECT content_hash, category, day, count FROM superseded ORDER BY 1, 2, 3"),
        ("record_metadata", "SELECT type, key, value, day, records, category FROM record_metadata ORDER BY 1, 2, 3, 4"),
    ]

    /// Each table's canonical rows, serialized, by table.
    public func canonicalContents() throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        for (table, sql) in Self.canonicalQueries {
            let statement = try db.prepare(sql)
            var text: [UInt8] = []
            while try statement.step() {
                for column in 0..<statement.columnCount {
                    switch statement.value(column) {
                    case .null: text += Array("~".utf8)
                    case .integer(let v): text += Array("i\(v)".utf8)
                    case .real(let v): text += Array("r\(v)".utf8)
                    case .text(let v): text += Array("t\(v.utf8.count):\(v)".utf8)
                    case .blob(let v): text += Array("b\(v.count):".utf8) + v
                    }
                    text.append(0x1F)
                }
                text.append(0x1E)
            }
            contents[table] = text
        }
        return contents
    }
}
