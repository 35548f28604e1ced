import Foundation

/// The record of one import in the audit trail (no sample values).
public struct ImportRecord: Hashable, Sendable {
    public var file: String
    public var format: String
    public var added: Int
    public var duplicates: Int
    public var rejected: Int

    public init(file: String, format: String, added: Int, duplicates: Int, rejected: Int) {
        self.file = file
        self.format = format
        self.added = added
        self.duplicates = duplicates
        self.rejected = rejected
    }
}
