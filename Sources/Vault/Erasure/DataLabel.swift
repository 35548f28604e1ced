import EventLog
import HealthModel
import VaultEvents

/// Which data key seals a data event: its consent category and the local month it starts in,
/// the unit erasure works in. Audit events and the string and source definitions have none:
/// they go under the audit key, which is never destroyed.
///
/// Persisted in the key table as `category/YYYY-MM` (`category/undated` for what carries no
/// date, the `Me` characteristics), the category spelled as `PersistedNames` spells it.
struct DataLabel: Hashable, Comparable, CustomStringConvertible {
    var category: HealthCategory
    /// nil for records without a date.
    var month: LocalMonth?

    var description: String { PersistedNames.name(of: category) + "/" + (month?.description ?? "undated") }
    var bytes: [UInt8] { Array(description.utf8) }

    init(category: HealthCategory, month: LocalMonth?) {
        self.category = category
        self.month = month
    }

    /// Parses a label from the key table; nil for one this build does not know.
    init?(bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let slash = text.firstIndex(of: "/"), let category = PersistedNames.category(named: String(text[..<slash])) else { return nil }
        let rest = String(text[text.index(after: slash)...])
        if rest == "undated" {
            self.init(category: category, month: nil)
        } else if let month = LocalMonth(parsing: rest) {
            self.init(category: category, month: month)
        } else {
            return nil
        }
    }

    /// The label of a data event; nil for audit events.
    static func of(_ event: VaultEvent) -> DataLabel? {
        switch event {
        case .sample(let s): DataLabel(category: s.category, month: month(of: s.start))
        case .workout(let w): DataLabel(category: .workouts, month: month(of: w.start))
        case .route(let r): DataLabel(category: .location, month: month(of: r.workoutStart))
        case .activitySummary(let a): DataLabel(category: .activity, month: LocalMonth(LocalDay(dayNumber: a.day)))
        case .characteristics: DataLabel(category: .profile, month: nil)
        case .correlation(let c): DataLabel(category: HealthCategory.of(type: c.type), month: month(of: c.start))
        case .genericRecord(let g): DataLabel(category: category(of: g), month: month(of: g))
        case .electrocardiogram(let e): DataLabel(category: .heart, month: month(of: e.recorded))
        case .sampleSuperseded(let s): DataLabel(category: s.replaced.category, month: month(of: s.replaced.start))
        case .trackerEntry(let e): DataLabel(category: e.category, month: LocalMonth(e.day))
        case .practiceLogged(let p): DataLabel(category: .workouts, month: LocalMonth(p.day))
        case .vaultCreated, .passphraseChanged, .importRecorded, .goalSet, .sourceOrderSet, .recipientAdded,
             .consentGranted, .consentRevoked, .exportPerformed, .identityRecorded, .masterKeyRotated, .erased,
             .companionPaired, .companionRevoked, .trackerDefined, .tailCut, .exerciseDefined:
            nil
        }
    }

    /// The local month of an instant in the offset it was recorded with.
    static func month(of timestamp: HealthTimestamp) -> LocalMonth {
        LocalMonth(LocalDay(instant: timestamp.seconds, utcOffset: timestamp.utcOffset))
    }

    /// Clinical records by their element; others by their `type` attribute, as samples are.
    private static func category(of record: GenericRecord) -> HealthCategory {
        if record.element.contains("Clinical") { return .clinical }
        let type = record.attributes.first { $0.key == "type" }?.value ?? record.element
        return HealthCategory.of(type: type)
    }

    /// The month of a record's `startDate` (or `date`, `receivedDate`) attribute, when it has one.
    private static func month(of record: GenericRecord) -> LocalMonth? {
        day(of: record).map(LocalMonth.init)
    }

    /// The local day of a record's `startDate` (or `date`, `receivedDate`) attribute, when it has one.
    static func day(of record: GenericRecord) -> LocalDay? {
        timestamp(of: record).map { LocalDay(instant: $0.seconds, utcOffset: $0.utcOffset) }
    }

    /// A record's `startDate` (or `date`, `receivedDate`) attribute, when it has a readable one.
    static func timestamp(of record: GenericRecord) -> HealthTimestamp? {
        for key in ["startDate", "date", "receivedDate"] {
            guard let value = record.attributes.first(where: { $0.key == key })?.value else { continue }
            let parsed = Array(value.utf8).withUnsafeBytes { HealthTimestamp.parseExportDate($0) ?? HealthTimestamp.parseISO8601($0) }
            if let parsed { return parsed }
        }
        return nil
    }

    static func < (a: DataLabel, b: DataLabel) -> Bool { a.description < b.description }
}
