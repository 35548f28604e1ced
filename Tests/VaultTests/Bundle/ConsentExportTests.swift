import Envelope
import EventLog
import Foundation
@testable import HealthModel
import Projections
import ResearchBundle
import SyntheticHealth
import Testing
@testable import Vault
import VaultTestSupport

/// Exports ship exactly what the consent in force covers.
@Suite(.serialized) struct ConsentExportTests {
    final class World {
        let dir = TemporaryDirectory("consent")
        let vault: Vault
        let keyPrefix: String
        /// Every sample's (and route point's) category, start and end, for counting.
        let samples: [(category: HealthCategory, start: HealthTimestamp, end: HealthTimestamp)]
        /// Undated records (the `Me` characteristics) per category: exported whatever the period.
        let undated: [HealthCategory: Int]
        /// The generator's own figures per local day (steps and active energy as the Health app
        /// shows them): the oracle for daily and hourly lines, made without the vault.
        let truth: [Int64: SyntheticExport.DayTruth]

        init() throws {
            vault = try makeVault(at: dir.path + "/vault", passphrase: "p")
            let zip = dir.path + "/export.zip"
            truth = try SyntheticExport.writeZip(to: zip, options: .init(days: 10, firstDay: (2024, 3, 26), tripStart: 3)).days
            _ = try vault.importFiles([zip])
            keyPrefix = dir.path + "/lab"
            try RecipientKeyFiles.generate(prefix: keyPrefix)
            let events = try vault.allEvents().map(\.event)
            samples = events.flatMap { event -> [(HealthCategory, HealthTimestamp, HealthTimestamp)] in
                switch event {
                case .sample(let s): return [(s.category, s.start, s.end)]
                case .route(let r):
                    return r.points.map { p in
                        let t = HealthTimestamp(seconds: p.time, utcOffset: r.workoutStart.utcOffset)
                        return (.location, t, t)
                    }
                default: return []
                }
            }
            undated = [.profile: events.reduce(0) { n, e in if case .characteristics(let entries) = e { n + entries.count } else { n } }]
        }
    }

    /// The spec's semantics, written out independently of `ConsentLedger`.
    struct Model {
        var current: [HealthCategory: ConsentGrant] = [:]
        mutating func grant(_ g: ConsentGrant) { for c in g.categories { current[c] = g } }
        mutating func revoke(_ categories: [HealthCategory]?) {
            if let categories { for c in categories { current[c] = nil } } else { current = [:] }
        }
        func inForce(on today: LocalDay) -> [HealthCategory: ConsentGrant] {
            current.filter { $0.value.expires == nil || today <= $0.value.expires! }
        }
    }

    static let firstDay = LocalDay(year: 2024, month: 3, day: 26)
    /// Grants are given before the data's days; exports happen 18 to 30 days after the first.
    static let grantedAt = Date(timeIntervalSince1970: 1_710_000_000)  // 2024-03-09

    /// The generator's figure of a metric's day, for the metrics it accounts for (nil for others);
    /// a day it wrote nothing for is 0.
    static func truthFigure(_ truth: [Int64: SyntheticExport.DayTruth], metric: String, day: LocalDay) -> Double? {
        switch metric {
        case "HKQuantityTypeIdentifierStepCount": Double(truth[day.dayNumber]?.steps ?? 0)
        case "HKQuantityTypeIdentifierActiveEnergyBurned": truth[day.dayNumber]?.activeEnergy ?? 0
        default: nil
        }
    }

    /// How near a figure must be to the generator's: steps exactly; kcal within half of one (the
    /// generator adds a run's energy unrounded, the export holds each sample's to the thousandth).
    static func truthTolerance(_ metric: String) -> Double {
        metric == "HKQuantityTypeIdentifierActiveEnergyBurned" ? 0.5 : 1e-9
    }

    /// Random consent histories over ten days of synthetic data that cross the spring DST change
    /// and a trip abroad, with sleep and workouts that cross midnight: `HEALTHVAULT_CONSENT_ROUNDS`
    /// of them (30 in `make test`, 1,000 in `make consentloop`).
    @Test func everyExportedLineIsCoveredByTheConsentInForce() throws {
        let world = try World()
        var rng = SeededRandom(seed: 20_241_123)
        let categories: [HealthCategory] = [.activity, .heart, .sleep, .body, .workouts, .vitals, .other, .location]
        let rounds = Int(ProcessInfo.processInfo.environment["HEALTHVAULT_CONSENT_ROUNDS"] ?? "") ?? 30
        var exportsChecked = 0, refusals = 0
        for round in 0..<rounds {
            let name = "lab \(round)"
            try world.vault.addRecipient(name: name, publicKeyFile: world.keyPrefix + ".pub")
            var model = Model()
            for _ in 0..<(1 + rng.next(4)) {
                if rng.next(4) == 0 {
                    let some = rng.next(2) == 0 ? nil : [categories[rng.next(categories.count)]]
                    try world.vault.revoke(recipient: name, categories: some)
                    model.revoke(some)
                } else {
                    let chosen = Array(Set((0..<(1 + rng.next(3))).map { _ in categories[rng.next(categories.count)] }))
                    let from = rng.next(3) == 0 ? nil : LocalDay(dayNumber: Self.firstDay.dayNumber + Int64(rng.next(8)))
                    let to = rng.next(3) == 0 ? nil : LocalDay(dayNumber: (from ?? Self.firstDay).dayNumber + Int64(rng.next(6)))
                    let expires = rng.next(3) == 0 ? nil : LocalDay(dayNumber: Self.firstDay.dayNumber + 20 + Int64(rng.next(10)))
                    let granularity = Granularity.allCases[rng.next(3)]
                    let g = try world.vault.grant(recipient: name, categories: chosen, from: from, to: to, granularity: granularity,
                                                  expires: expires, purpose: rng.next(2) == 0 ? "study \(round)" : nil, now: Self.grantedAt)
                    model.grant(g)
                }
            }
            let today = LocalDay(dayNumber: Self.firstDay.dayNumber + 18 + Int64(rng.next(12)))
            let expected = model.inForce(on: today)
            #expect(try world.vault.consentLedger().inForce(for: name, on: today) == expected, "round \(round)")
            let bundle = world.dir.path + "/b\(round).bundle"
            guard !expected.isEmpty else {
                #expect(throws: VaultError.noConsentInForce(recipient: name)) {
                    try world.vault.export(to: name, path: bundle, today: today)
                }
                #expect(!FileManager.default.fileExists(atPath: bundle))
                refusals += 1
                continue
            }
            let summary = try world.vault.export(to: name, path: bundle, csv: round % 5 == 0, today: today)
            let out = world.dir.path + "/out\(round)"
            _ = try BundleReader.open(bundle, keyFile: world.keyPrefix + ".key", outputDirectory: out)
            try check(world: world, out: out, expected: expected, summary: summary)
            exportsChecked += 1
        }
        #expect(exportsChecked >= 10 && refusals >= 1, "exports \(exportsChecked), refusals \(refusals)")
        // Every export is in the audit trail.
        let exports = try world.vault.history().filter { $0.event.kind == "export" }
        #expect(exports.count == exportsChecked)
    }

    /// The figure `rings`, `sleep` or `workouts` gives for a derived daily line (to a millionth, as bundles carry it).
    private func derivedFigure(_ vault: Vault, metric: String, day: LocalDay, category: HealthCategory) throws -> Double? {
        let parts = metric.split(separator: ":", maxSplits: 1).map(String.init)
        let micro = { (v: Double) in (v * 1e6).rounded() / 1e6 }
        switch (category, parts[0]) {
        case (.activity, "ring"), (.activity, "goal"):
            guard let ring = try vault.rings(from: day, to: day).first else { return nil }
            let figures: [String: (Double, Double)] = ["move": (ring.move, ring.moveGoal), "exercise": (ring.exercise, ring.exerciseGoal),
                                                       "stand": (Double(ring.stand), ring.standGoal)]
            return figures[parts[1]].map { micro(parts[0] == "ring" ? $0.0 : $0.1) }
        case (.sleep, "sleep"):
            guard let night = try vault.sleep(from: day, to: day).first(where: { $0.night == day }) else { return nil }
            let stages = ["inBed": night.inBed, "asleep": night.asleep, "core": night.core, "deep": night.deep, "rem": night.rem, "awake": night.awake]
            return stages[parts[1]].map(micro)
        case (.workouts, "workout"):
            return try vault.workouts(by: .day, from: day, to: day).first { $0.type == parts[1] }.map { micro($0.minutes) }
        default:
            return nil
        }
    }

    private func check(world: World, out: String, expected: [HealthCategory: ConsentGrant], summary: ExportSummary) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: out + "/data").filter { $0.hasSuffix(".ndjson") }
        #expect(Set(files.map { String($0.dropLast(7)) }).isSubset(of: Set(expected.keys.map(\.rawValue))))
        for (category, grant) in expected {
            let path = out + "/data/\(category.rawValue).ndjson"
            // Every category in force has its file, empty when it holds nothing: a missing one fails.
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let lines = text.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            #expect(summary.counts[category.rawValue] ?? 0 == lines.count)
            for line in lines {
                #expect(line["category"] as? String == category.rawValue)
                if grant.granularity == .raw {
                    // Undated records (`Me`) have no start or end, and only they.
                    if line["start"] is NSNull {
                        #expect(line["end"] is NSNull && world.undated[category] != nil, "\(line)")
                        continue
                    }
                    let start = try #require(line["start"] as? String), end = try #require(line["end"] as? String)
                    let type = try #require(line["type"] as? String)
                    #expect(line["metric"] == nil)
                    // The type belongs to the file's category, whichever way it was named.
                    #expect(HealthCategory.of(type: type) == category || category == .workouts, "\(type) in \(category)")
                    // Both ends inside the period, in the line's own clock: the start on a covered
                    // day, the end on one or exactly at the midnight that closes the period.
                    #expect(grant.covers(day: LocalDay(parsing: String(start.prefix(10)))!), "\(start) outside \(grant)")
                    let endDay = LocalDay(parsing: String(end.prefix(10)))!
                    let endsAtClosingMidnight = end.dropFirst(10).hasPrefix("T00:00:00") && grant.to.map { endDay.dayNumber == $0.dayNumber + 1 } == true
                    #expect(grant.covers(day: endDay) || endsAtClosingMidnight, "\(start)..\(end) outside \(grant)")
                } else if let metric = line["metric"] as? String, metric.contains(":") {
                    // A figure the vault derives: daily only, on a covered day, the figure its query gives.
                    let period = try #require(line["period"] as? String)
                    let day = try #require(LocalDay(parsing: period))
                    #expect(grant.granularity == .daily && grant.covers(day: day), "\(metric) \(period) under \(grant)")
                    #expect(try derivedFigure(world.vault, metric: metric, day: day, category: category) == (line["value"] as? NSNumber)?.doubleValue,
                            "\(metric) \(period)")
                } else {
                    let period = try #require(line["period"] as? String)
                    #expect(HealthCategory.of(type: try #require(line["metric"] as? String)) == category)
                    #expect(period.contains("T") == (grant.granularity == .hourly))
                    #expect(grant.covers(day: LocalDay(parsing: String(period.prefix(10)))!), "\(period) outside \(grant)")
                }
            }
            switch grant.granularity {
            case .raw:
                // Every sample with any part inside the period (in both its clocks when its ends
                // carry different offsets), counted without the export's code.
                func overlaps(_ start: HealthTimestamp, _ end: HealthTimestamp) -> Bool {
                    let lower = grant.from.map { max($0.dayNumber * 86_400 - Int64(start.utcOffset), $0.dayNumber * 86_400 - Int64(end.utcOffset)) } ?? .min
                    let upper = grant.to.map { min(($0.dayNumber + 1) * 86_400 - Int64(end.utcOffset), ($0.dayNumber + 1) * 86_400 - Int64(start.utcOffset)) } ?? .max
                    return end.seconds > start.seconds ? start.seconds < upper && end.seconds > lower
                        : start.seconds >= lower && LocalDay(instant: start.seconds, utcOffset: start.utcOffset) <= (grant.to ?? LocalDay(dayNumber: .max))
                }
                let expectedCount = world.samples.filter { $0.category == category && overlaps($0.start, $0.end) }.count + (world.undated[category] ?? 0)
                // Workouts are records, not samples: counted apart.
                if category != .workouts { #expect(lines.count == expectedCount, "\(category)") }
            case .daily:
                // Steps and active energy as the generator counted them; every figure as `summary`
                // gives it (one read model behind both: a consistency check, not an oracle).
                for line in lines {
                    let metric = line["metric"] as! String, period = line["period"] as! String
                    guard let oracle = Self.truthFigure(world.truth, metric: metric, day: LocalDay(parsing: period)!) else { continue }
                    #expect(abs(oracle - (line["value"] as! NSNumber).doubleValue) <= Self.truthTolerance(metric), "\(metric) \(period): generator says \(oracle)")
                }
                for line in lines where !(line["metric"] as! String).contains(":") {
                    let metric = line["metric"] as! String, period = line["period"] as! String
                    let row = try world.vault.summary(metric: metric, by: .day, from: LocalDay(parsing: period), to: LocalDay(parsing: period))
                        .first { $0.unit == line["unit"] as? String }
                    #expect(abs((row?.value ?? .nan) - (line["value"] as! NSNumber).doubleValue) < 1e-5, "\(metric) \(period)")
                }
            case .hourly:
                // Hours add up to the day figures of `summary` for cumulative metrics.
                var byDay: [String: Double] = [:]
                for line in lines where AggregationStyle.of(type: line["metric"] as! String) == .cumulative {
                    byDay["\(line["metric"]!)|\(line["unit"]!)|\((line["period"] as! String).prefix(10))", default: 0] += (line["value"] as! NSNumber).doubleValue
                }
                for (key, total) in byDay {
                    let parts = key.split(separator: "|").map(String.init)
                    let day = LocalDay(parsing: parts[2])
                    if let oracle = Self.truthFigure(world.truth, metric: parts[0], day: day!) {
                        #expect(abs(oracle - total) <= Self.truthTolerance(parts[0]) + 1e-6 * oracle, "\(key): hours add up to \(total), the generator says \(oracle)")
                    }
                    let row = try world.vault.summary(metric: parts[0], by: .day, from: day, to: day).first { $0.unit == parts[1] }
                    #expect(abs((row?.value ?? .nan) - total) < 1e-3 * max(1, total), "\(key)")
                }
            }
        }
    }
}
