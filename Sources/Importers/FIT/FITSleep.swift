import HealthModel

/// Sleep levels (`sleep_level`, message 275) of a Garmin sleep file (a device's `Sleep/` folder,
/// file type 49) as sleep-analysis samples: a level holds from its message to the next one's
/// time, the last one to the sleep's stop event (event 74, type stop) when that comes later, and
/// runs of one level are one sample. Light sleep is HealthKit's core sleep; an unmeasurable level
/// (the watch was off the wrist) is no sample. Levels that are all awake are no sleep (a vívosmart
/// 4 writes such files through the day, its stages kept in undocumented messages): none is taken,
/// so that the day does not become a night of twelve waking hours.
enum FITSleep {
    static let global: UInt16 = 275
    /// The `event` of a sleep's start and stop (`event_type` 0 and 1).
    static let sleepEvent: Int64 = 74

    static let stages: [Int64: String] = [
        1: "HKCategoryValueSleepAnalysisAwake",
        2: "HKCategoryValueSleepAnalysisAsleepCore",
        3: "HKCategoryValueSleepAnalysisAsleepDeep",
        4: "HKCategoryValueSleepAnalysisAsleepREM",
    ]

    /// The spans of sleep in `messages`: start and end (seconds since 1970) and the stage's value.
    static func spans(_ messages: [FITMessage]) -> [(start: Int64, end: Int64, value: String)] {
        let levels = messages.filter { $0.global == global }.compactMap { message -> (time: Int64, level: Int64)? in
            guard let time = message.date(253), let level = message.integer(0) else { return nil }
            return (time, level)
        }.sorted { $0.time < $1.time }
        guard let lastLevel = levels.last, levels.contains(where: { $0.level >= 2 && $0.level <= 4 }) else { return [] }
        let stop = messages.last { $0.global == 21 && $0.integer(0) == sleepEvent && $0.integer(1) == 1 }?.date(253)
        var spans: [(start: Int64, end: Int64, value: String)] = []
        var run: (start: Int64, level: Int64)?
        func close(at end: Int64) {
            guard let open = run else { return }
            if end > open.start, let value = stages[open.level] { spans.append((open.start, end, value)) }
            run = nil
        }
        for level in levels where level.level != run?.level {
            close(at: level.time)
            run = (level.time, level.level)
        }
        close(at: max(stop ?? lastLevel.time, lastLevel.time))
        return spans
    }
}
