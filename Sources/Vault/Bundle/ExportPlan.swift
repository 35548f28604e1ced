import EventLog
import HealthModel
import VaultEvents

/// What an export writes, decided before a line is read: the grant in force per category (its
/// granularity, data period and types), the months erasure took, what the last bundle to the
/// same recipient already held (`--since-last`), and which data keys' frames hold the lines the
/// read models cannot give. A bundle's lines then come from three sources: the read models'
/// figures (`figures(from:_:)`), a scan of exactly those keys' frames, and the tracker entries
/// that scan meets (`scannedLines(vault:models:_:)`). Nothing of a category without a grant is
/// decrypted.
struct ExportPlan {
    /// The grant in force for each category the bundle holds.
    let grants: [HealthCategory: ConsentGrant]
    /// Erased months: a span reaching into one is cut there, a day of one gives no figure.
    let erased: ErasedMonths
    let since: SinceLast?
    /// The live data keys the scan reads: those of the categories whose lines come from the log
    /// (raw and hourly grants, and trackers' categories: a tracker's unit is the day, its entries
    /// are read whatever the granularity), for every month up to the grant's last (a sample that
    /// starts before the period may reach into it; one that starts after it cannot, since a key's
    /// month is its events' starting month in their own offset, the day `PeriodClip` compares).
    let keys: Set<UInt32>

    init(grants: [HealthCategory: ConsentGrant], trackerCategories: Set<HealthCategory>, dataKeys: [EventLog.DataKey],
         erased: Set<DataLabel>, since: SinceLast?) {
        self.grants = grants
        self.erased = ErasedMonths(erased)
        self.since = since
        let scanned = grants.filter { $0.value.granularity != .daily || trackerCategories.contains($0.key) }
        keys = Vault.liveKeys(dataKeys) { label in
            guard let grant = scanned[label.category] else { return false }
            if let month = label.month, let last = grant.to, month > LocalMonth(last) { return false }
            return true
        }
    }

    /// The grant of `category` when it is at `granularity`.
    func grant(_ category: HealthCategory, at granularity: Granularity) -> ConsentGrant? {
        grants[category].flatMap { $0.granularity == granularity ? $0 : nil }
    }

    /// The categories in a stable order (the bundle's files are sorted by name).
    var categories: [HealthCategory] { grants.keys.sorted { $0.rawValue < $1.rawValue } }
}
