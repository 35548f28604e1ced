/// The tables of the read models (docs/projections.md). Days are local day numbers (days since
/// 1970-01-01 in the sample's own UTC offset); values are in each metric's canonical unit.
enum ProjectionSchema {
    /// Raised whenever a table changes shape or meaning; an image of another format is rebuilt.
    static let format = 9

    static let statements = """
        CREATE TABLE projection_meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
        CREATE TABLE metrics(
            id INTEGER PRIMARY KEY, identifier TEXT NOT NULL, unit TEXT NOT NULL,
            cumulative INTEGER NOT NULL, UNIQUE(identifier, unit));
        CREATE TABLE sources(
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, device_class TEXT NOT NULL,
            samples INTEGER NOT NULL DEFAULT 0, UNIQUE(name, device_class));
        CREATE TABLE source_order(position INTEGER PRIMARY KEY, source_id INTEGER NOT NULL REFERENCES sources(id));
        CREATE TABLE day_intervals(
            metric_id INTEGER NOT NULL, day INTEGER NOT NULL, data BLOB NOT NULL,
            PRIMARY KEY(metric_id, day)) WITHOUT ROWID;
        CREATE TABLE daily(
            metric_id INTEGER NOT NULL, day INTEGER NOT NULL, samples INTEGER NOT NULL,
            total REAL, micro_sum INTEGER, min REAL, max REAL,
            PRIMARY KEY(metric_id, day)) WITHOUT ROWID;
        CREATE TABLE stand_hours(day INTEGER PRIMARY KEY, hours INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE TABLE apple_rings(
            day INTEGER PRIMARY KEY, move REAL, move_goal REAL, exercise REAL, exercise_goal REAL,
            stand REAL, stand_goal REAL);
        CREATE TABLE held_types(
            id INTEGER PRIMARY KEY, type TEXT NOT NULL, unit TEXT NOT NULL, category TEXT NOT NULL,
            undated INTEGER NOT NULL DEFAULT 0, UNIQUE(type, unit));
        CREATE TABLE held_days(
            type_id INTEGER NOT NULL, day INTEGER NOT NULL, count INTEGER NOT NULL, minutes REAL NOT NULL DEFAULT 0,
            PRIMARY KEY(type_id, day)) WITHOUT ROWID;
        CREATE TABLE sleep_segments(
            night INTEGER NOT NULL, start_day INTEGER NOT NULL, start INTEGER NOT NULL, start_offset INTEGER NOT NULL,
            end INTEGER NOT NULL, end_offset INTEGER NOT NULL, stage INTEGER NOT NULL, source_id INTEGER NOT NULL);
        CREATE INDEX sleep_by_night ON sleep_segments(night);
        CREATE INDEX sleep_by_start_day ON sleep_segments(start_day);
        CREATE TABLE workouts(
            day INTEGER NOT NULL, start INTEGER NOT NULL, type TEXT NOT NULL, minutes REAL NOT NULL,
            energy REAL, distance REAL, end INTEGER, source_id INTEGER);
        CREATE INDEX workouts_by_day ON workouts(day);
        CREATE TABLE practices(
            day INTEGER NOT NULL, at INTEGER NOT NULL, exercise TEXT NOT NULL, body_parts TEXT NOT NULL, motion TEXT NOT NULL,
            repetitions INTEGER NOT NULL, seconds INTEGER);
        CREATE INDEX practices_by_day ON practices(day);
        CREATE TABLE superseded(
            content_hash INTEGER NOT NULL, category TEXT NOT NULL, day INTEGER NOT NULL, count INTEGER NOT NULL,
            PRIMARY KEY(content_hash, category, day)) WITHOUT ROWID;
        CREATE INDEX superseded_by_day ON superseded(category, day);
        CREATE TABLE record_metadata(
            type TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, day INTEGER NOT NULL, records INTEGER NOT NULL,
            category TEXT NOT NULL, PRIMARY KEY(type, key, value, day)) WITHOUT ROWID;
        CREATE INDEX record_metadata_by_day ON record_metadata(category, day);
        CREATE TABLE goal_changes(id INTEGER PRIMARY KEY, ring TEXT NOT NULL, value REAL NOT NULL, from_day INTEGER NOT NULL);
        CREATE TABLE rings(
            day INTEGER PRIMARY KEY, move REAL NOT NULL, move_goal REAL NOT NULL,
            exercise REAL NOT NULL, exercise_goal REAL NOT NULL, stand INTEGER NOT NULL, stand_goal REAL NOT NULL);
        CREATE VIEW daily_summary AS
            SELECT m.identifier AS metric, date(d.day * 86400, 'unixepoch') AS date, m.unit AS unit,
                   CASE WHEN m.cumulative THEN d.total ELSE d.micro_sum / 1e6 / d.samples END AS value,
                   d.min AS min, d.max AS max, d.samples AS samples
            FROM daily d JOIN metrics m ON m.id = d.metric_id;
        CREATE VIEW metadata_by_day AS
            SELECT type, key, value, date(day * 86400, 'unixepoch') AS date, records FROM record_metadata;
        CREATE VIEW daily_rings AS
            SELECT date(r.day * 86400, 'unixepoch') AS date, r.move, r.move_goal, r.exercise, r.exercise_goal,
                   r.stand, r.stand_goal, a.move AS apple_move, a.exercise AS apple_exercise, a.stand AS apple_stand
            FROM rings r LEFT JOIN apple_rings a ON a.day = r.day;
        """
}
