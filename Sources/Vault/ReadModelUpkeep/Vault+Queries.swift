import Foundation
import HealthModel
import Projections
import VaultEvents

extension Vault {
    /// Rings per day, computed from the samples (deduplicated), with each day's goals.
    public func rings(from: LocalDay? = nil, to: LocalDay? = nil) throws -> [RingDay] {
        try withReadModels { try $0.rings(from: from, to: to) }
    }

    /// Per-period figures of a metric given by short name (`steps`) or HealthKit identifier.
    public func summary(metric name: String, by period: SummaryPeriod, from: LocalDay? = nil, to: LocalDay? = nil) throws -> [SummaryRow] {
        let metric: String
        do {
            metric = try Self.metricIdentifier(name)
        } catch VaultError.unknownMetric(let unknown, let known) {
            // A workout activity `types` lists (`running`): said so, with where to look.
            if try heldTypes().contains(where: { $0.category == .workouts && ShortNames.short(for: $0.type) == name.lowercased() }) {
                throw VaultError.notAMetric(name: name, reason: "a workout activity: `vaultctl workouts` shows workouts by type")
            }
            throw VaultError.unknownMetric(name: unknown, known: known)
        }
        return try withReadModels { try $0.summary(metric: metric, by: period, from: from, to: to) }
    }

    /// The HealthKit identifier a metric name stands for: a metric name (`steps`), any type's
    /// short name (`blood-glucose`, as `types` prints them) or an identifier.
    public static func metricIdentifier(_ name: String) throws -> String {
        guard let identifier = MetricNames.identifier(for: name) else {
            throw VaultError.unknownMetric(name: name, known: MetricNames.table.keys.sorted())
        }
        return identifier
    }

    /// Whether any ring goal is known (set by the person, or in Apple's summaries); without one
    /// the rings are drawn against `Ring.defaultGoal` (400 kcal, 30 min, 12 h).
    public func goalsKnown() throws -> Bool {
        try withReadModels { try $0.goalsKnown() }
    }

    /// Nights, by the local day each ends, with minutes per sleep stage (`sleep`).
    public func sleep(from: LocalDay? = nil, to: LocalDay? = nil) throws -> [SleepNight] {
        try withReadModels { try $0.sleep(from: from, to: to) }
    }

    /// Workouts per period and activity type (`workouts`).
    public func workouts(by period: SummaryPeriod, from: LocalDay? = nil, to: LocalDay? = nil) throws -> [WorkoutRow] {
        try withReadModels { try $0.workouts(by: period, from: from, to: to) }
    }

    /// Every type the vault holds, with its count and first and last day (`types`).
    public func heldTypes() throws -> [HeldTypeRow] {
        try withReadModels { try $0.heldTypes() }
    }

    /// Current and longest streaks per ring and for all three.
    public func streaks() throws -> Streaks {
        try withReadModels { try $0.streaks() }
    }

    /// Goals the person set, oldest first.
    public func goalChanges() throws -> [GoalChange] {
        try withReadModels { try $0.goalChanges() }
    }

    /// Records a ring goal in force from `from` on (an event in the log), then updates the read models.
    @discardableResult
    public func setGoal(_ ring: Ring, value: Double, from: LocalDay, now: Date = Date()) throws -> String? {
        guard value.isFinite, value > 0, value <= Self.goalLimit(ring) else {
            throw VaultError.invalidGoal(ring: ring.rawValue, limit: Self.goalLimit(ring))
        }
        try append([.goalSet(GoalSetting(at: now, ring: ring, value: DecimalValue(double: value), from: from))])
        return refreshProjections()
    }

    static func goalLimit(_ ring: Ring) -> Double {
        switch ring {
        case .move: 20_000
        case .exercise: 1_440
        case .stand: 24
        }
    }

    /// Every source with its rank.
    public func sources() throws -> [SourceRow] {
        try withReadModels { try $0.sources() }
    }

    /// Puts the sources with these names first, in this order (an event in the log); an empty list
    /// returns to the default order. Names that match no known source are refused.
    @discardableResult
    public func setSourceOrder(names: [String], now: Date = Date()) throws -> String? {
        let known = try sources()
        var keys: [SourceKey] = []
        for name in names {
            let matching = known.filter { $0.key.name == name }.map(\.key)
            guard !matching.isEmpty else { throw VaultError.unknownSource(name: name) }
            keys.append(contentsOf: matching.sorted { $0.deviceClass < $1.deviceClass })
        }
        try append([.sourceOrderSet(at: now, keys)])
        return refreshProjections()
    }

    /// Catches the read models up after a write. The write is committed whatever happens here:
    /// a failure is returned as a warning, and the next command catches up instead.
    public func refreshProjections() -> String? {
        do {
            _ = try projections()
            return projectionNotice
        } catch {
            return "the read models could not be updated (\(error)); they catch up on the next command"
        }
    }

    /// Runs one read-only SQL statement over the read models.
    public func query(_ sql: String) throws -> SQLResult {
        try withReadModels { try $0.query(sql) }
    }

    /// Writes an UNENCRYPTED SQLite copy of the read models to `path`, outside the vault directory.
    public func writePlaintextProjections(to path: String) throws {
        let target = try plaintextTarget(path)
        try withReadModels { try $0.writePlaintextCopy(to: target) }
    }

    /// Where a plaintext file (a copy of the read models, a report) may be written for `path`:
    /// outside the vault directory, and not over an existing file or link. Returns the path with
    /// its folder's links resolved.
    public func plaintextTarget(_ path: String) throws -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL
        // Compared with links resolved: a link to (or into) the vault directory is the vault.
        let folder = absolute.deletingLastPathComponent().resolvingSymlinksInPath().path
        let vaultPath = URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath().path
        guard folder != vaultPath, !folder.hasPrefix(vaultPath + "/") else { throw VaultError.plaintextInsideVault(path: path) }
        // A link (even a dangling one) is refused like a file: a writer would write through it.
        let target = folder + "/" + absolute.lastPathComponent
        guard !FileManager.default.fileExists(atPath: target),
              (try? FileManager.default.destinationOfSymbolicLink(atPath: target)) == nil else { throw VaultError.fileExists(path: path) }
        return target
    }
}
