import EventLog
import Foundation
import HealthModel
import Projections
import VaultEvents

/// One tracker day: the level of the day's last entry and its value.
public struct TrackerDay: Equatable, Sendable {
    public var day: LocalDay
    public var level: String
    public var value: DecimalValue
}

extension Vault {
    /// Defines a tracker (or defines it again, from now on). Levels are `name=value`; success
    /// levels must be among them; the day starts `dayStartsMinutes` after local midnight.
    public func addTracker(name: String, levels: [TrackerLevel], success: [String], dayStartsMinutes: Int = 0,
                           healthKitType: String? = nil, now: Date = Date()) throws -> TrackerDefinition {
        try Self.checkTrackerName(name)
        guard !levels.isEmpty else { throw VaultError.invalidTracker(reason: "give at least one level (--levels name=value,...)") }
        guard Set(levels.map(\.name)).count == levels.count else { throw VaultError.invalidTracker(reason: "a level is named twice") }
        for level in levels {
            if let problem = Self.displayNameProblem(level.name) { throw VaultError.invalidTracker(reason: "a level's name: " + problem) }
        }
        if let unknown = success.first(where: { name in !levels.contains { $0.name == name } }) {
            throw VaultError.invalidTracker(reason: "success level '\(unknown)' is not one of the levels")
        }
        guard (0..<1440).contains(dayStartsMinutes) else { throw VaultError.invalidTracker(reason: "the day starts between 00:00 and 23:59") }
        if let healthKitType, !healthKitType.hasPrefix("HK") {
            throw VaultError.invalidTracker(reason: "--healthkit takes a HealthKit type identifier (HKCategoryTypeIdentifier...)")
        }
        let definition = TrackerDefinition(at: now, name: name, levels: levels, success: success, dayStartsMinutes: dayStartsMinutes,
                                           healthKitType: healthKitType)
        try append([.trackerDefined(definition)])
        return definition
    }

    /// Every tracker, its latest definition, sorted by name.
    public func trackers() throws -> [TrackerDefinition] {
        var latest: [String: TrackerDefinition] = [:]
        try forEachAuditEvent { _, event in
            if case .trackerDefined(let t) = event { latest[t.name] = t }
        }
        return latest.values.sorted { $0.name < $1.name }
    }

    /// Every category a tracker's definitions named (a redefinition can move new entries to
    /// another one; earlier entries keep theirs).
    func trackerCategories(of name: String? = nil) throws -> Set<HealthCategory> {
        var categories: Set<HealthCategory> = []
        try forEachAuditEvent { _, event in
            if case .trackerDefined(let t) = event, name == nil || t.name == name { categories.insert(t.category) }
        }
        return categories
    }

    /// The tracker named `name`.
    public func tracker(named name: String) throws -> TrackerDefinition {
        guard let found = try trackers().first(where: { $0.name == name }) else { throw VaultError.unknownTracker(name: name) }
        return found
    }

    /// Logs `level` for tracker `name` at `at`; returns the entry (with the day it belongs to).
    @discardableResult
    public func track(name: String, level: String, at: HealthTimestamp) throws -> TrackerEntry {
        let tracker = try tracker(named: name)
        guard let chosen = tracker.levels.first(where: { $0.name == level }) else {
            throw VaultError.invalidTracker(reason: "'\(level)' is not a level of \(name) (\(tracker.levels.map(\.name).joined(separator: ", ")))")
        }
        let entry = TrackerEntry(tracker: name, level: chosen.name, value: chosen.value, at: at, day: tracker.day(of: at), category: tracker.category)
        if erasedLabels().contains(DataLabel(category: entry.category, month: LocalMonth(entry.day))) {
            throw VaultError.invalidTracker(reason: "\(entry.category.rawValue) data of \(LocalMonth(entry.day)) was erased; nothing is logged there")
        }
        try append([.trackerEntry(entry)])
        return entry
    }

    /// The tracker's days from `from` to `to` (inclusive, either open): each day's level is its
    /// last entry's (latest time; of two at the same time, the one logged last).
    public func trackerDays(name: String, from: LocalDay? = nil, to: LocalDay? = nil) throws -> [TrackerDay] {
        _ = try tracker(named: name)
        var last: [LocalDay: TrackerEntry] = [:]
        try forEachTrackerEntry(categories: try trackerCategories(of: name)) { entry in
            guard entry.tracker == name, from.map({ entry.day >= $0 }) ?? true, to.map({ entry.day <= $0 }) ?? true else { return }
            if let kept = last[entry.day], kept.at.seconds > entry.at.seconds { return }
            last[entry.day] = entry
        }
        return last.values.sorted { $0.day < $1.day }.map { TrackerDay(day: $0.day, level: $0.level, value: $0.value) }
    }

    /// Streaks of successful days (a level in the tracker's success set), as habit apps count
    /// them: consecutive days; a day without an entry ends a streak. The current streak ends on
    /// the latest day with an entry (0 when that day was not a success).
    public func trackerStreak(name: String) throws -> Streak {
        let tracker = try tracker(named: name)
        let success = Set(tracker.success)
        var result = Streak(current: 0, longest: 0)
        var run = 0, runStart: LocalDay?, previous: LocalDay?
        for day in try trackerDays(name: name) {
            let consecutive = previous.map { day.day.dayNumber == $0.dayNumber + 1 } ?? false
            if success.contains(day.level) {
                if run == 0 || !consecutive { run = 0; runStart = day.day }
                run += 1
                if run > result.longest { (result.longest, result.longestFrom, result.longestTo) = (run, runStart, day.day) }
            } else {
                run = 0
                runStart = nil
            }
            previous = day.day
        }
        result.current = run
        if run > 0 { (result.currentFrom, result.currentTo) = (runStart, previous) }
        return result
    }

    /// Every tracker entry of `categories`, in log order (only those categories' keys are read).
    func forEachTrackerEntry(categories: Set<HealthCategory>, _ body: (TrackerEntry) throws -> Void) throws {
        let keys = liveKeys(of: categories)
        guard !keys.isEmpty else { return }
        try forEachEvent(sealedBy: keys) { _, event in
            if case .trackerEntry(let entry) = event { try body(entry) }
        }
    }

    /// Tracker names are shown in lists and bundles.
    static func checkTrackerName(_ name: String) throws {
        if let problem = displayNameProblem(name) { throw VaultError.invalidTracker(reason: "a tracker's name: " + problem) }
    }
}
