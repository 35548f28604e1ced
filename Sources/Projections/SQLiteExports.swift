// The read models live in SQLite through `SQLiteStore`: its errors and values are part of what
// they answer (`SQLiteError`, `StoredDataError`, `SQLValue`).
@_exported import SQLiteStore
