import Foundation

/// One parser of untrusted bytes, set up so that a fuzzer can feed it inputs and check, after
/// each, the promises `docs/reliability.md` lists: no crash, no hang, bounded memory, a refused
/// input changes nothing and names its file, an accepted one leaves a sound vault.
///
/// The same harness runs under libFuzzer (`healthvault-fuzz`, built by `scripts/fuzz.sh`) and in
/// `make test`, which replays the kept corpus and every input that once failed.
public protocol FuzzHarness: AnyObject {
    /// Feeds one input. Refusing it is fine; a broken promise throws `FuzzInvariantViolation`.
    func run(_ input: [UInt8]) throws -> FuzzOutcome

    /// Valid inputs generated afresh, from which mutation starts. Each is accepted by `run`.
    func seeds() throws -> [FuzzSeed]
}

/// What a harness did with an input.
public enum FuzzOutcome: Equatable, Sendable {
    /// The parser took the input whole.
    case accepted
    /// The parser refused it with this message (and changed nothing).
    case refused(String)

    /// Whether the input was accepted.
    public var isAccepted: Bool { self == .accepted }
}

/// A named starting input.
public struct FuzzSeed: Sendable {
    public var name: String
    public var bytes: [UInt8]

    public init(name: String, bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}

/// A promise an input broke. Under libFuzzer it becomes a crash, so the input is saved.
public struct FuzzInvariantViolation: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The parsers that can be fuzzed, by the name `scripts/fuzz.sh` and the corpus folders use.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `events.log` as a whole file: header, frame headers, lengths, torn tails, the chain.
    case log
    /// The keyslot file (its checksum is also recomputed, to reach the fields behind it).
    case keyslot
    /// The key table (`keys.sealed`), as a file and as plaintext sealed afresh.
    case keys
    /// The read models' page-encrypted database file, as the file and as a journal beside it.
    case readModels = "read-models"
    /// The frame index (`frames.index`), as a file and as plaintext sealed afresh.
    case frameIndex = "frame-index"
    /// `export.xml` through `vaultctl import`.
    case appleXML = "apple-xml"
    /// `export.zip` through `vaultctl import`.
    case appleZip = "apple-zip"
    /// Companion-app JSON through `vaultctl import`.
    case json
    /// CSV through `vaultctl import`.
    case csv
    /// A FIT file (Garmin, Wahoo, Coros) through `vaultctl import`.
    case fit
    /// A bundle file as the researcher receives it.
    case bundle
    /// The decrypted contents of a bundle (entries, manifest, signature, files), sealed and
    /// signed afresh by the harness so that mutations get past the encryption.
    case bundleContents = "bundle-contents"

    /// A harness for this target working in `workspace` (created if missing, owned by it).
    public func makeHarness(workspace: String) throws -> any FuzzHarness {
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: true)
        switch self {
        case .log: return try LogFileHarness(workspace: workspace)
        case .keyslot: return try KeyslotHarness(workspace: workspace)
        case .keys: return try KeyTableHarness(workspace: workspace)
        case .readModels: return try ReadModelFileHarness(workspace: workspace)
        case .frameIndex: return try FrameIndexHarness(workspace: workspace)
        case .appleXML: return try ImportHarness(workspace: workspace, kind: .appleXML)
        case .appleZip: return try ImportHarness(workspace: workspace, kind: .appleZip)
        case .json: return try ImportHarness(workspace: workspace, kind: .json)
        case .csv: return try ImportHarness(workspace: workspace, kind: .csv)
        case .fit: return try ImportHarness(workspace: workspace, kind: .fit)
        case .bundle: return try BundleFileHarness(workspace: workspace)
        case .bundleContents: return try BundleContentsHarness(workspace: workspace)
        }
    }
}
