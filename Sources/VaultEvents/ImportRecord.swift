import Foundation

/// The record of one import in the audit trail (no sample values).
public struct ImportRecord: Hashable, Sendable {
    public var file: String
    public var format: String
    public var added: Int
    public var duplicates: Int
    public var rejected: Int
    /// Samples of the vault a re-posted value replaced (companion JSON's rule); recorded since
    /// 2026-11-27, 0 in older records.
    public var replaced: Int

    public init(file: String, format: String, added: Int, duplicates: Int, rejected: Int, replaced: Int = 0) {
        self.replaced = replaced
        self.file = file
        self.format = format
        self.added = added
        self.duplicates = duplicates
        self.rejected = rejected
    }
}
