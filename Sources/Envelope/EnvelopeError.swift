/// Why an envelope operation failed. Messages carry no key material and no plaintext.
public enum EnvelopeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key of the wrong length or kind.
    case invalidKey(String)
    /// The sealed key does not open with this secret key: the data is for someone else.
    case notForThisKey
    /// A chunk failed authentication (tampered, or from another stream).
    case chunkDamaged(index: Int)
    /// The stream ended before its final chunk.
    case truncated
    /// Data follows the final chunk.
    case trailingData

    public var description: String {
        switch self {
        case .invalidKey(let why): "invalid key: \(why)"
        case .notForThisKey: "it is not addressed to this key"
        case .chunkDamaged(let index): "chunk \(index) fails authentication (the file was changed or damaged)"
        case .truncated: "it ends before its final chunk (the file is truncated)"
        case .trailingData: "data follows its final chunk"
        }
    }
}
