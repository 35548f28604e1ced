import EventLog
import Foundation
import HealthModel
import SecureMemory
import Vault

/// Feeds frame indexes (`frames.index`) to a vault whose log holds frames of several keys.
///
/// Each input is tried twice: as the file itself (snapshot header, authentication, the position
/// check against the log), and as the index's plaintext sealed afresh under the vault's key at
/// the log's committed position, so that mutations reach the entry parser behind the
/// authentication. Promises checked: whatever the file, the frames the log gives are exactly the
/// frames a full read finds (a file not sealed by the key is never used); the entry parser takes
/// or refuses any plaintext without crashing or allocating without bound.
final class FrameIndexHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    private let pristine: [UInt8]
    private let pristinePlaintext: [UInt8]
    private let frames: [String]
    private let vaultID: [UInt8]
    private let committed: LogPosition

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        let vault = try workspace.fixedKeyVault()
        for month in 1...3 {
            let start = HealthTimestamp(seconds: Int64(1_706_745_600 + month * 31 * 86_400), utcOffset: 3600)
            try vault.append([
                .sample(HealthSample(type: "HKQuantityTypeIdentifierHeartRate", source: HealthSource(name: "Fuzz Watch"), start: start, end: start,
                                     value: .quantity(DecimalValue(mantissa: Int64(60 + month), scale: 0), unit: "count/min"))),
                .sample(HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "Fuzz Watch"), start: start, end: start,
                                     value: .quantity(DecimalValue(mantissa: Int64(600 + month), scale: 0), unit: "count"))),
            ])
        }
        let log = try EventLog.open(in: workspace.vaultPath, masterKey: FuzzWorkspace.fixedMasterKey, mode: .readOnly)
        vaultID = log.vaultID
        committed = log.committed
        frames = try Self.describe(log.frameSummaries())
        pristine = try workspace.read("vault/frames.index")
        guard let contents = try SealedSnapshot.read(from: workspace.vaultPath + "/frames.index", purpose: EventLog.frameIndexPurpose,
                                                     vaultID: vaultID, masterKey: FuzzWorkspace.fixedMasterKey) else {
            throw FuzzInvariantViolation("the vault wrote no frame index")
        }
        pristinePlaintext = contents.plaintext.withUnsafeBytes { Array($0) }
    }

    static func describe(_ summaries: [EventLog.FrameSummary]) -> [String] {
        summaries.map { "\($0.sequence) \($0.offset) \($0.keyID) \($0.firstEventIndex) \($0.eventCount) \($0.chainHash)" }
    }

    func seeds() throws -> [FuzzSeed] {
        [FuzzSeed(name: "three-months.index", bytes: pristine), FuzzSeed(name: "three-months.plaintext", bytes: pristinePlaintext)]
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        defer { _ = try? workspace.write(pristine, to: "vault/frames.index") }
        _ = try workspace.write(input, to: "vault/frames.index")
        let asFile = try Self.describe(open().frameSummaries())
        guard asFile == frames else { throw FuzzInvariantViolation("a frame index file changed the frames the log gives") }
        try input.withUnsafeBytes { raw in
            try SealedSnapshot.write(raw, purpose: EventLog.frameIndexPurpose, position: committed, vaultID: vaultID,
                                     masterKey: FuzzWorkspace.fixedMasterKey, to: workspace.vaultPath + "/frames.index")
        }
        // Sealed by the key holder, a well-formed index is trusted: only a crash is a finding here.
        let asPlaintext = try? Self.describe(open().frameSummaries())
        return input == pristine || asPlaintext == frames ? .accepted : .refused("not this log's frames")
    }

    private func open() throws -> EventLog {
        try EventLog.open(in: workspace.vaultPath, masterKey: FuzzWorkspace.fixedMasterKey, mode: .readOnly)
    }
}
