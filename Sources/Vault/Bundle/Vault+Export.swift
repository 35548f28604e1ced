import Envelope
import EventLog
import Foundation
import HealthModel
import Projections
import ResearchBundle
import SecureMemory
import VaultEvents

/// What `export` wrote.
public struct ExportSummary: Sendable {
    public var path: String
    public var recipient: String
    /// Lines per category.
    public var counts: [String: Int]
    public var files: [String]
    public var consentIDs: [String]
    /// BLAKE2b-256 of the bundle file, hex.
    public var bundleHash: String
    public var bytes: Int
    /// `--since-last`: the bundle this one follows, nil for a full export.
    public var follows: String?
}

extension Vault {
    /// Writes a bundle for `recipient` holding exactly what the consent in force covers: the
    /// granted categories, samples inside the data period, at the granted granularity. Refuses,
    /// writing nothing, when no consent is in force. The export is recorded in the log before the
    /// bundle appears under its name.
    /// `sinceLast`: only what the last bundle to `recipient` did not hold (`SinceLast`); its
    /// manifest names that bundle (`follows`). Without an earlier bundle it is a full export.
    /// `format`: the data files as the lines themselves (ndjson), FHIR R4 Observations or Open
    /// mHealth data points (`StandardFormat`).
    public func export(to recipient: String, path: String, csv: Bool = false, sinceLast: Bool = false, format: StandardFormat = .ndjson,
                       now: Date = Date(), today: LocalDay? = nil) throws -> ExportSummary {
        guard !FileManager.default.fileExists(atPath: path) else { throw VaultError.fileExists(path: path) }
        let ledger = try consentLedger()
        guard let record = ledger.recipients[recipient] else { throw VaultError.unknownRecipient(name: recipient) }
        let inForce = ledger.inForce(for: recipient, on: today ?? LocalDay.today(now: now))
        guard !inForce.isEmpty else { throw VaultError.noConsentInForce(recipient: recipient) }
        let identity = try identity(ledger: ledger, now: now)
        let position = log.committed
        let since = sinceLast ? try SinceLast(vault: self, recipient: recipient) : nil
        let files = try withReadModels { try collectLines(inForce: inForce, models: $0, csv: csv, since: since) }.sorted { $0.key.rawValue < $1.key.rawValue }
        var dataFiles: [BundleDraft.DataFile] = []
        for (category, lines) in files {
            let grant = inForce[category]!
            let base = "data/\(category.rawValue)"
            dataFiles.append(BundleDraft.DataFile(path: base + format.suffix, category: category.rawValue, granularity: grant.granularity.rawValue,
                                                  format: format.rawValue, lines: lines.count,
                                                  bytes: try format.convert(lines.ndjson, granularity: grant.granularity.rawValue, createdAt: now,
                                                                            salt: Array("\(identity.fingerprint)\u{0}\(now.timeIntervalSince1970)\u{0}\(category.rawValue)".utf8))))
            if csv {
                dataFiles.append(BundleDraft.DataFile(path: base + ".csv", category: category.rawValue, granularity: grant.granularity.rawValue,
                                                      format: "csv", lines: lines.count, bytes: lines.csv))
            }
        }
        let grants = Array(Set(inForce.values)).sorted { $0.at < $1.at }
        let counts = Dictionary(uniqueKeysWithValues: files.map { ($0.key.rawValue, $0.value.count) })
        var draft = BundleDraft(
            createdAt: now, recipientName: recipient, recipientKey: record.publicKey, chainHash: position.chainHash.hex,
            consents: grants.map { grant in
                // The receipt names only what this grant still covers now (not revoked, not superseded).
                ConsentReceipt(grant, categories: inForce.filter { $0.value.id == grant.id }.keys.sorted { $0.rawValue < $1.rawValue })
            },
            files: dataFiles, counts: counts)
        draft.follows = since?.follows
        let stream = try draft.entries(signedBy: identity.signing, encryptionKey: identity.encryption.publicKey)

        let temporary = path + ".tmp." + RandomBytes.make(8).hex
        let (hash, bytes) = try BundleWriter.write(stream, recipientKey: record.publicKey,
                                                   to: temporary, fileSystem: fileSystem)
        do {
            try append([.exportPerformed(ExportRecord(at: now, recipient: recipient, consentIDs: grants.map(\.id), counts: counts, bundleHash: hash))])
            // link(2) refuses an existing name: a file that appeared at `path` meanwhile is kept.
            do {
                try fileSystem.link(temporary, to: path)
            } catch StorageError.alreadyExists {
                throw VaultError.fileExists(path: path)
            } catch {
                throw VaultError.cannotWrite(path: path, reason: "cannot be created: \(error)")
            }
            // The name is durable before the export is acknowledged.
            do {
                try fileSystem.syncDirectory(directoryName(of: path))
            } catch {
                throw VaultError.cannotWrite(path: path, reason: "was written but its folder could not be synced: \(error)")
            }
            // A second name of the same, audited bundle if this fails: nothing to undo.
            try? fileSystem.remove(temporary)
        } catch {
            try? fileSystem.remove(temporary)
            throw error
        }
        return ExportSummary(path: path, recipient: recipient, counts: counts, files: dataFiles.map(\.path),
                             consentIDs: grants.map(\.id), bundleHash: hash, bytes: bytes, follows: since?.follows)
    }

    /// The lines of every category in force, filtered to its data period and granularity.
    private func collectLines(inForce: [HealthCategory: ConsentGrant], models: ReadModels, csv: Bool, since: SinceLast?) throws -> [HealthCategory: BundleLines] {
        var files: [HealthCategory: BundleLines] = [:]
        for (category, grant) in inForce { files[category] = BundleLines(withCSV: csv, aggregated: grant.granularity != .raw) }
        // Spans of live months reaching into erased ones are cut there; days of erased months give no figure.
        let erased = ErasedMonths(erasedLabels())

        // Daily: the read models' own day figures, as `summary` shows them.
        for metric in try models.metrics() {
            let category = HealthCategory.of(type: metric.identifier)
            guard let grant = inForce[category], grant.granularity == .daily, grant.admits(category, type: metric.identifier) else { continue }
            for row in try models.summary(metric: metric.identifier, by: .day, from: grant.from, to: grant.to) where row.unit == metric.unit {
                if let day = LocalDay(parsing: row.period), erased.contains(category, day: day) { continue }
                if let since, let day = LocalDay(parsing: row.period), since.heldAggregate(category, .daily, day: day) { continue }
                files[category]!.aggregate(category: category.rawValue, metric: metric.identifier, period: row.period, value: row.value,
                                           unit: row.unit, min: row.min, max: row.max, samples: row.samples)
            }
        }

        try derivedDailyLines(inForce: inForce, models: models, since: since, erased: erased, into: &files)

        // Raw and hourly: one pass over the log.
        // Tracker entries are read from the log whatever the granularity.
        let trackerCategories = try self.trackerCategories()
        let needsScan = inForce.values.contains { $0.granularity != .daily } || !trackerCategories.isDisjoint(with: inForce.keys)
        guard needsScan else { return files }
        let ranks = Dictionary(try models.sources().map { ($0.key, $0.rank) }, uniquingKeysWith: { a, _ in a })
        var hourly: [HealthCategory: HourlyAggregator] = [:]
        for (category, grant) in inForce where grant.granularity == .hourly {
            hourly[category] = HourlyAggregator { ranks[$0] ?? Int.max }
        }
        var feed = ProjectionFeed()
        // Tracker days of daily and hourly grants: each day's last entry (a tracker's unit is the day).
        var trackerDays: [HealthCategory: [String: [LocalDay: TrackerEntry]]] = [:]
        // Samples a re-posted value replaced are out of every bundle.
        var superseded = SampleContent.Skipping(try models.supersededSamples())
        try forEachEvent { index, event in
            if case .sample(let s) = event, superseded.skips(s) { return }
            switch event {
            case .sample(let s):
                let category = s.category
                guard let grant = inForce[category], grant.granularity != .daily, grant.admits(category, type: s.type) else { return }
                if grant.granularity == .raw {
                    if let since, since.heldRaw(category, start: s.start, end: s.end, index: index) { return }
                    // Nothing outside the data period: the span is cut at its edges.
                    let to = erased.lastDay(of: category, startingAt: s.start, before: grant.to)
                    guard let clip = PeriodClip(start: s.start, end: s.end, from: grant.from, to: to) else { return }
                    let value: BundleLines.RawValue
                    var unit: String?
                    switch s.value {
                    case .quantity(let stored, let u):
                        // In the unit people read (g of protein, mg/dL of glucose), exact when stored exact.
                        let reading = ReadingUnits.reading(type: s.type, unit: u)
                        unit = reading?.unit ?? u
                        let v = reading.map { stored.scaled(by: $0.factor) } ?? stored
                        if clip.clipped, AggregationStyle.of(type: s.type) == .cumulative {
                            value = .decimal(DecimalValue(double: BundleLines.micro(v.double * clip.fraction)))
                        } else {
                            value = .decimal(v)
                        }
                    case .category(let text): value = .text(text)
                    case .none: value = .none
                    }
                    files[category]!.raw(category: category.rawValue, type: s.type, start: clip.start, end: clip.end, value: value,
                                         unit: unit, clipped: clip.clipped, fields: SourceFields.fields(of: s.source, metadata: s.metadata))
                } else if let input = feed.input(for: event) {
                    // Hourly rows are split at hour boundaries and kept to the period by their hour's day below.
                    hourly[category]!.add(input)
                }
            case .workout(let w):
                guard let grant = inForce[.workouts], grant.granularity == .raw,
                      let clip = PeriodClip(start: w.start, end: w.end, from: grant.from,
                                            to: erased.lastDay(of: .workouts, startingAt: w.start, before: grant.to)) else { return }
                if let since, since.heldRaw(.workouts, start: w.start, end: w.end, index: index) { return }
                let duration = w.duration.map { clip.clipped ? DecimalValue(double: BundleLines.micro($0.double * clip.fraction)) : $0 }
                files[.workouts]!.raw(category: "workouts", type: w.activityType, start: clip.start, end: clip.end,
                                      value: duration.map { .decimal($0) } ?? .none,
                                      unit: duration == nil ? nil : "min", clipped: clip.clipped, fields: SourceFields.fields(of: w.source, metadata: w.metadata))
            case .practiceLogged(let p):
                let end = HealthTimestamp(seconds: p.at.seconds + Int64(p.seconds ?? 0), utcOffset: p.at.utcOffset)
                // A set running past the period (23:55 on its last day, ten minutes) is cut at its edge.
                guard let grant = inForce[.workouts], grant.granularity == .raw,
                      let clip = PeriodClip(start: p.at, end: end, from: grant.from, to: erased.lastDay(of: .workouts, startingAt: p.at, before: grant.to))
                else { return }
                if let since, since.heldRaw(.workouts, start: p.at, end: end, index: index) { return }
                var fields: [(String, BundleLines.Field)] = [("exercise", .text(p.exercise.name)),
                                                              ("bodyParts", .text(p.exercise.bodyParts.map(\.rawValue).joined(separator: ","))),
                                                              ("motion", .text(p.exercise.motion.rawValue))]
                if let seconds = p.seconds { fields.append(("minutes", .number(Double(seconds) / 60))) }
                files[.workouts]!.raw(category: "workouts", type: "practice", start: clip.start, end: clip.end,
                                      value: .decimal(DecimalValue(mantissa: Int64(p.repetitions), scale: 0)), unit: "reps", clipped: clip.clipped, fields: fields)
            case .trackerEntry(let entry):
                guard let grant = inForce[entry.category], grant.covers(day: entry.day) else { return }
                if grant.granularity == .raw {
                    // Its time too: an entry before the day start lies on the next calendar day.
                    guard PeriodClip(start: entry.at, end: entry.at, from: grant.from, to: grant.to) != nil else { return }
                    if let since, since.heldRaw(entry.category, start: entry.at, end: entry.at, index: index) { return }
                    files[entry.category]!.raw(category: entry.category.rawValue, type: entry.tracker, start: entry.at, end: entry.at,
                                               value: .decimal(entry.value), unit: nil, clipped: false)
                } else if trackerDays[entry.category]?[entry.tracker]?[entry.day].map({ $0.at.seconds <= entry.at.seconds }) ?? true {
                    trackerDays[entry.category, default: [:]][entry.tracker, default: [:]][entry.day] = entry
                }
            case .route, .characteristics, .correlation, .genericRecord, .electrocardiogram:
                guard let label = DataLabel.of(event), let grant = inForce[label.category], grant.granularity == .raw else { return }
                // A `Me` characteristic is held by its event's place and its category's grant.
                if let since, case .characteristics = event, since.heldUndated(label.category, index: index) { return }
                RecordLines.append(event, category: label.category, grant: grant, to: &files[label.category]!)
            default:
                return
            }
        }
        for (category, trackers) in trackerDays {
            for (tracker, days) in trackers.sorted(by: { $0.key < $1.key }) {
                for (day, entry) in days.sorted(by: { $0.key < $1.key }) {
                    if let since, since.heldAggregate(category, inForce[category]!.granularity, day: day) { continue }
                    files[category]!.aggregate(category: category.rawValue, metric: tracker, period: day.description, value: entry.value.double,
                                               unit: "level", min: nil, max: nil, samples: 1)
                }
            }
        }
        for (category, aggregator) in hourly {
            let rows = aggregator.rows()
            let withheld = Self.withheldHours(rows)
            for (index, row) in rows.enumerated() {
                // Hourly data keeps to the data period by the hour's own day.
                guard let day = LocalDay(parsing: String(row.period.prefix(10))), inForce[category]!.covers(day: day),
                      !erased.contains(category, day: day) else { continue }
                if let since, since.heldAggregate(category, .hourly, day: day) { continue }
                if withheld.contains(index) { continue }
                files[category]!.aggregate(category: category.rawValue, metric: row.metric, period: row.period, value: row.value,
                                           unit: row.unit, min: row.min, max: row.max, samples: row.samples)
            }
        }
        return files
    }
}

extension Vault {
    /// The hourly rows an export withholds, by index. A discrete metric's hour with a single
    /// reading is that reading, timed to the hour: closer to raw data than the grant allows. And
    /// when a day of a metric withholds exactly one such hour, the day's other hours and a daily
    /// figure of the same day (another bundle's) would give it back by subtraction, so the hour
    /// of that day with the fewest readings is withheld with it: only their sum can be known.
    static func withheldHours(_ rows: [HourlyAggregator.Row]) -> Set<Int> {
        var withheld: Set<Int> = []
        var byDay: [String: [Int]] = [:]
        for (index, row) in rows.enumerated() where row.min != nil {
            byDay[row.metric + "\u{0}" + row.period.prefix(10), default: []].append(index)
            if row.samples < 2 { withheld.insert(index) }
        }
        for indices in byDay.values where indices.filter(withheld.contains).count == 1 {
            let kept = indices.filter { !withheld.contains($0) }
            if let fewest = kept.min(by: { (rows[$0].samples, $0) < (rows[$1].samples, $1) }) { withheld.insert(fewest) }
        }
        return withheld
    }

    /// Figures the vault derives per day, for daily grants (docs/bundle-format.md, "daily"):
    /// `activity` the three rings and their goals, `sleep` each night's minutes by stage,
    /// `workouts` each day's minutes and count per activity type. They let a researcher draw what
    /// `rings`, `sleep` and `workouts` show, without a single sample leaving.
    func derivedDailyLines(inForce: [HealthCategory: ConsentGrant], models: ReadModels, since: SinceLast?, erased: ErasedMonths,
                           into files: inout [HealthCategory: BundleLines]) throws {
        func daily(_ category: HealthCategory) -> ConsentGrant? {
            inForce[category].flatMap { $0.granularity == .daily ? $0 : nil }
        }
        if let grant = daily(.activity) {
            for day in try models.rings(from: grant.from, to: grant.to) where !erased.contains(.activity, day: day.day) {
                if let since, since.heldAggregate(.activity, .daily, day: day.day, ringFigure: true) { continue }
                let rings: [(String, Double, Double, String)] = [
                    ("move", day.move, day.moveGoal, "kcal"), ("exercise", day.exercise, day.exerciseGoal, "min"),
                    ("stand", Double(day.stand), day.standGoal, "h"),
                ]
                for (ring, value, goal, unit) in rings {
                    files[.activity]!.aggregate(category: "activity", metric: "ring:" + ring, period: day.day.description, value: value,
                                                unit: unit, min: nil, max: nil, samples: 0)
                    files[.activity]!.aggregate(category: "activity", metric: "goal:" + ring, period: day.day.description, value: goal,
                                                unit: unit, min: nil, max: nil, samples: 0)
                }
            }
        }
        if let grant = daily(.sleep) {
            for night in try models.sleep(from: grant.from, to: grant.to) where grant.covers(day: night.night) && !erased.contains(.sleep, day: night.night) {
                if let since, since.heldAggregate(.sleep, .daily, day: night.night) { continue }
                let stages: [(String, Double)] = [
                    ("inBed", night.inBed), ("asleep", night.asleep), ("core", night.core), ("deep", night.deep),
                    ("rem", night.rem), ("awake", night.awake),
                ]
                for (stage, minutes) in stages {
                    files[.sleep]!.aggregate(category: "sleep", metric: "sleep:" + stage, period: night.night.description, value: minutes,
                                             unit: "min", min: nil, max: nil, samples: 0)
                }
            }
        }
        if let grant = daily(.workouts) {
            for row in try models.workouts(by: .day, from: grant.from, to: grant.to) {
                if let day = LocalDay(parsing: row.period), erased.contains(.workouts, day: day) { continue }
                if let since, let day = LocalDay(parsing: row.period), since.heldAggregate(.workouts, .daily, day: day) { continue }
                files[.workouts]!.aggregate(category: "workouts", metric: "workout:" + row.type, period: row.period, value: row.minutes,
                                            unit: "min", min: nil, max: nil, samples: row.count)
            }
        }
        // Sets of exercises: each day's repetitions per exercise (`samples` the sets), for daily and
        // hourly grants alike (a set's unit is the day, as a tracker's).
        if let grant = inForce[.workouts], grant.granularity != .raw {
            for row in try models.practiceDays(from: grant.from, to: grant.to) where !erased.contains(.workouts, day: row.day) {
                if let since, since.heldAggregate(.workouts, grant.granularity, day: row.day) { continue }
                files[.workouts]!.aggregate(category: "workouts", metric: "exercise:" + row.exercise, period: row.day.description,
                                            value: Double(row.repetitions), unit: "reps", min: nil, max: nil, samples: row.sets)
            }
        }
    }
}

extension ConsentReceipt {
    /// The FHIR receipt of `grant`, for the `categories` of it in force.
    init(_ grant: ConsentGrant, categories: [HealthCategory]) {
        self.init(id: grant.id, at: grant.at, recipient: grant.recipient, categories: categories.map(\.rawValue),
                  granularity: grant.granularity.rawValue, from: grant.from?.description, to: grant.to?.description,
                  expires: grant.expires?.description, purpose: grant.purpose)
    }
}
