/// What `import` did, per file and in total: the spec's `import --json` shape.
public struct ImportReport: Codable, Equatable, Sendable {
    public var added = 0
    public var duplicates = 0
    public var rejected = 0
    /// Records refused because their category's month was erased (see `FileImportReport.erased`).
    public var erased = 0
    /// Companion samples that replaced an earlier value for the same metric, source and time range.
    public var replaced = 0
    /// Samples added that are an app's rewritten copies of a sample the vault holds: identical but
    /// for their creation date, kept in the log and counted once in totals (docs/projections.md).
    /// Counted by the read models, for the whole command.
    public var rewrites = 0
    public var files: [FileImportReport] = []

    public init() {}
}

/// What importing one file did.
public struct FileImportReport: Codable, Equatable, Sendable {
    public var path: String
    /// `apple-health-zip`, `apple-health-xml`, `companion-json` or `csv`.
    public var format: String
    public var added = 0
    public var duplicates = 0
    public var rejected = 0
    /// Records of a category and month that were erased, refused so that erased data does not
    /// come back (`import --allow-erased` takes them).
    public var erased = 0
    /// Records the file gives twice as the same record: a correlation's member that the export
    /// also lists at top level. Every record of a file is added, a duplicate, rejected, erased
    /// or one of these.
    public var repeats = 0
    /// Companion samples (JSON files, posts) that replaced the value held for the same metric,
    /// source and time range (Yappi's upsert rule); the replaced value no longer counts.
    public var replaced = 0
    /// Human-readable notes: rejected records by reason (with where the first one is), missing
    /// route files, repaired values. Never a sample value.
    public var warnings: [String] = []

    public init(path: String, format: String) {
        self.path = path
        self.format = format
    }
}

/// Why a file could not be imported. Nothing of any file of the command is kept.
public enum ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case notWellFormed(path: String, location: SourceLocation, message: String)
    case notAnExport(path: String, reason: String)
    case unsupportedFormat(path: String)
    /// Every entry of the file was refused: nothing of it could be kept (`reasons`: the import's
    /// warnings, which name each reason and where it was first met).
    case nothingImportable(path: String, rejected: Int, reasons: [String])
    /// A FIT file whose bytes do not hold together (its CRC, a record cut short): refused whole.
    case damagedFIT(path: String, offset: Int, reason: String)

    /// The file (and entry inside a zip) the error is about.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .notWellFormed(let path, _, _), .notAnExport(let path, _), .unsupportedFormat(let path),
             .nothingImportable(let path, _, _), .damagedFIT(let path, _, _): path
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "\(path): cannot be read: \(reason)"
        case .notWellFormed(let path, let location, let message): "\(path):\(location): \(message); nothing was imported"
        case .notAnExport(let path, let reason): "\(path): not an Apple Health export: \(reason)"
        case .unsupportedFormat(let path): "\(path): unknown format (expected an Apple Health export.zip or export.xml, companion JSON or CSV)"
        case .damagedFIT(let path, let offset, let reason):
            "\(path): byte \(offset): \(reason); the FIT file was refused whole (a FIT file is taken only when its CRC checks out)"
        case .nothingImportable(let path, let rejected, let reasons):
            "\(path): every one of its \(rejected) entries was refused, so nothing of the import was kept: " + reasons.joined(separator: "; ")
        }
    }
}

/// Counts rejected records by reason, remembering where the first of each was.
struct RejectionTally {
    private var counts: [RejectReason: (count: Int, first: SourceLocation)] = [:]

    var total: Int { counts.values.reduce(0) { $0 + $1.count } }

    mutating func add(_ reason: RejectReason, at location: SourceLocation) {
        if let existing = counts[reason] { counts[reason] = (existing.count + 1, existing.first) } else { counts[reason] = (1, location) }
    }

    func warnings(entry: String) -> [String] {
        RejectReason.allCases.compactMap { reason in
            counts[reason].map { "\($0.count) record(s) rejected: \(reason.rawValue) (first at \(entry):\($0.first))" }
        }
    }
}
