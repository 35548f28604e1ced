import Foundation
@testable import HealthModel
import Projections
import Testing
@testable import Vault
import VaultTestSupport

/// Trackers a person logs by hand: levels with values, a day that starts at a set time (an entry
/// at 01:30 with the day starting at 04:00 belongs to the day before, whatever DST does), the
/// last entry of a day as its level, streaks as habit apps count them, and consent.
@Suite struct TrackerTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let levels = [TrackerLevel(name: "steady", value: DecimalValue(mantissa: 0, scale: 0)),
                         TrackerLevel(name: "easy", value: DecimalValue(mantissa: 4, scale: 0)),
                         TrackerLevel(name: "wild", value: DecimalValue(mantissa: 6, scale: 0))]

    func at(_ text: String) -> HealthTimestamp { LocalTime.parse(Substring(text), timeZone: Self.berlin)! }

    func noAlc(_ t: ImportTestVault, healthKitType: String? = nil) throws {
        _ = try t.vault.addTracker(name: "NoAlc", levels: Self.levels, success: ["steady"], dayStartsMinutes: 4 * 60, healthKitType: healthKitType)
    }

    @Test func entriesBeforeTheDayStartBelongToTheDayBeforeAcrossBothDSTChanges() throws {
        let t = try ImportTestVault()
        try noAlc(t)
        // Spring forward (02:00 → 03:00 on 2025-03-30) and fall back (03:00 → 02:00 on 2025-10-26).
        let days = try [("2025-03-30 01:30", "2025-03-29"), ("2025-03-30 03:30", "2025-03-29"), ("2025-03-30 04:00", "2025-03-30"),
                        ("2025-10-26 02:30", "2025-10-25"), ("2025-10-26 03:59", "2025-10-25"), ("2025-10-26 04:00", "2025-10-26")].map { local, _ in
            try t.vault.track(name: "NoAlc", level: "easy", at: at(local)).day.description
        }
        #expect(days == ["2025-03-29", "2025-03-29", "2025-03-30", "2025-10-25", "2025-10-25", "2025-10-26"])
    }

    @Test func aDaysLevelIsItsLastEntry() throws {
        let t = try ImportTestVault()
        try noAlc(t)
        // Logged out of order: the latest time counts, not the latest logged.
        try t.vault.track(name: "NoAlc", level: "steady", at: at("2025-03-30 03:30"))
        try t.vault.track(name: "NoAlc", level: "wild", at: at("2025-03-29 22:00"))
        try t.vault.track(name: "NoAlc", level: "easy", at: at("2025-03-30 01:30"))
        let days = try t.vault.trackerDays(name: "NoAlc")
        #expect(days.map { "\($0.day) \($0.level) \($0.value)" } == ["2025-03-29 steady 0"])
        #expect(throws: VaultError.invalidTracker(reason: "'tipsy' is not a level of NoAlc (steady, easy, wild)")) {
            try t.vault.track(name: "NoAlc", level: "tipsy", at: at("2025-03-29 22:00"))
        }
        #expect(throws: VaultError.unknownTracker(name: "Coffee")) { try t.vault.track(name: "Coffee", level: "easy", at: at("2025-03-29 22:00")) }
        #expect(throws: VaultError.invalidTracker(reason: "a tracker's name: no leading or trailing spaces")) {
            try t.vault.addTracker(name: " NoAlc", levels: Self.levels, success: [])
        }
        #expect(throws: VaultError.invalidTracker(reason: "success level 'dry' is not one of the levels")) {
            try t.vault.addTracker(name: "Beer", levels: Self.levels, success: ["dry"])
        }
    }

    @Test func streaksCountConsecutiveSuccessfulDaysAndAMissingDayEndsOne() throws {
        let t = try ImportTestVault()
        try noAlc(t)
        let log: [(String, String)] = [("01", "steady"), ("02", "steady"), ("03", "steady"), ("04", "wild"), ("05", "steady"), ("06", "steady"),
                                       ("08", "steady")]
        for (day, level) in log { try t.vault.track(name: "NoAlc", level: level, at: at("2025-05-\(day) 21:00")) }
        let streak = try t.vault.trackerStreak(name: "NoAlc")
        #expect(streak.longest == 3)
        #expect(streak.longestFrom?.description == "2025-05-01" && streak.longestTo?.description == "2025-05-03")
        #expect(streak.current == 1)
        #expect(streak.currentFrom?.description == "2025-05-08")
        try t.vault.track(name: "NoAlc", level: "easy", at: at("2025-05-09 21:00"))
        #expect(try t.vault.trackerStreak(name: "NoAlc").current == 0)
    }

    @Test func entriesLeaveOnlyUnderAGrantOfTheirCategory() throws {
        let t = try ImportTestVault()
        try noAlc(t)
        _ = try t.vault.addTracker(name: "Meditate", levels: [TrackerLevel(name: "done", value: DecimalValue(mantissa: 1, scale: 0))],
                                   success: ["done"], healthKitType: "HKCategoryTypeIdentifierMindfulSession")
        try t.vault.track(name: "NoAlc", level: "easy", at: at("2024-03-10 20:00"))
        try t.vault.track(name: "NoAlc", level: "wild", at: at("2024-03-10 23:00"))
        try t.vault.track(name: "NoAlc", level: "steady", at: at("2024-03-11 20:00"))
        try t.vault.track(name: "Meditate", level: "done", at: at("2024-03-10 07:00"))
        let shared = try SharedLines(t)
        let mindfulOnly = try shared.export([.mindfulness], from: nil, to: nil)
        #expect(mindfulOnly.hasNoFile(.trackers))
        #expect(mindfulOnly.lines(.mindfulness).map { $0["type"] as? String } == ["Meditate"])
        let raw = try shared.export([.trackers], from: LocalDay(year: 2024, month: 3, day: 10), to: LocalDay(year: 2024, month: 3, day: 10))
        #expect(raw.lines(.trackers).map { $0["value"] as? Double } == [4, 6])
        let daily = try shared.export([.trackers], from: nil, to: nil, granularity: .daily)
        #expect(daily.lines(.trackers).map { [$0["period"] as? String ?? "", "\($0["value"] ?? "")"] } == [["2024-03-10", "6"], ["2024-03-11", "0"]])
    }

    @Test func aRedefinitionThatMovesTheCategoryKeepsTheEarlierEntries() throws {
        let t = try ImportTestVault()
        let done = [TrackerLevel(name: "done", value: DecimalValue(mantissa: 1, scale: 0))]
        _ = try t.vault.addTracker(name: "Meditate", levels: done, success: ["done"])
        try t.vault.track(name: "Meditate", level: "done", at: at("2024-03-10 07:00"))
        _ = try t.vault.addTracker(name: "Meditate", levels: done, success: ["done"], healthKitType: "HKCategoryTypeIdentifierMindfulSession")
        let later = try t.vault.track(name: "Meditate", level: "done", at: at("2024-03-11 07:00"))
        #expect(later.category == .mindfulness)
        #expect(try t.vault.trackerDays(name: "Meditate").map(\.day.description) == ["2024-03-10", "2024-03-11"])
        #expect(try t.vault.trackerStreak(name: "Meditate").current == 2)
        // A daily grant of trackers alone still holds the earlier day.
        let shared = try SharedLines(t)
        let daily = try shared.export([.trackers], from: nil, to: nil, granularity: .daily)
        #expect(daily.lines(.trackers).map { $0["period"] as? String } == ["2024-03-10"])
    }

    @Test func aRawGrantLeavesOutAnEntryTimedAfterItsLastDay() throws {
        let t = try ImportTestVault()
        try noAlc(t)
        // 01:30 on the 11th belongs to the 10th (the day starts at 04:00) but happened on the 11th.
        try t.vault.track(name: "NoAlc", level: "wild", at: at("2024-03-11 01:30"))
        try t.vault.track(name: "NoAlc", level: "easy", at: at("2024-03-10 20:00"))
        let shared = try SharedLines(t)
        let raw = try shared.export([.trackers], from: LocalDay(year: 2024, month: 3, day: 10), to: LocalDay(year: 2024, month: 3, day: 10))
        #expect(raw.lines(.trackers).map { $0["value"] as? Double } == [4])
    }

    @Test func erasingTheTrackersMonthRemovesItsDays() throws {
        let t = try ImportTestVault()
        try noAlc(t)
        try t.vault.track(name: "NoAlc", level: "easy", at: at("2024-03-10 20:00"))
        try t.vault.track(name: "NoAlc", level: "steady", at: at("2024-04-10 20:00"))
        _ = try t.vault.erase(categories: [.trackers], from: LocalMonth(year: 2024, month: 3), to: LocalMonth(year: 2024, month: 3))
        #expect(try t.vault.trackerDays(name: "NoAlc").map(\.day.description) == ["2024-04-10"])
        #expect { try t.vault.track(name: "NoAlc", level: "easy", at: at("2024-03-12 20:00")) } throws: { ($0 as? VaultError) == .invalidTracker(reason: "trackers data of 2024-03 was erased; nothing is logged there") }
    }
}
