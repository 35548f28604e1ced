import Foundation

/// The audit record of an erasure (`vaultctl erase`): which keys were destroyed, named by their
/// labels (`heart/2024-03`), and how many events they sealed. No value of any of them.
public struct ErasureRecord: Hashable, Sendable {
    public var at: Date
    /// 16 hex digits, random; the key table's tombstones carry it too, so that an erasure cut
    /// short by a crash is recorded exactly once.
    public var eraseID: String
    /// `category/YYYY-MM` (or `category/undated`) of every key destroyed, sorted.
    public var labels: [String]
    /// Events the destroyed keys sealed.
    public var events: Int

    public init(at: Date, eraseID: String, labels: [String], events: Int) {
        self.at = at
        self.eraseID = eraseID
        self.labels = labels
        self.events = events
    }

    /// The categories erased, sorted.
    public var categories: [String] { Array(Set(labels.compactMap { $0.split(separator: "/").first.map(String.init) })).sorted() }
    /// The months erased (`YYYY-MM`, or `undated`), sorted.
    public var months: [String] { Array(Set(labels.compactMap { $0.split(separator: "/").last.map(String.init) })).sorted() }
}
