import Foundation

/// The record of one import in the audit trail (no sample values).
public struct ImportRecord: Hashable, Sendable {
    public var file: String
    public var format: String
    public var added: Int
    public var duplicates: Int
    public var rejected: Int
}
