import EventLog
import Foundation
import HealthModel
import Vault

/// Feeds key tables (`keys.sealed`) to a vault holding data of several categories and months.
///
/// Each input is tried twice: as the file itself (header, lengths, authentication, and the
/// head record's digest of the table in force), and as the table's plaintext, sealed afresh under
/// the vault's table key so that mutations reach the entry parser behind the authentication.
/// Promises checked: the pristine table opens the vault; any other file is refused naming
/// `keys.sealed` (the head record names another table), never read; the entry parser takes or
/// refuses any plaintext without crashing or allocating without bound.
final class KeyTableHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    private let pristine: [UInt8]
    private let vaultID: [UInt8]
    private let events: Set<String>

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        let vault = try workspace.fixedKeyVault()
        let samples = (1...3).flatMap { month in
            [HealthCategory.activity, .heart, .sleep].map { category -> VaultEvent in
                let type = category == .activity ? "HKQuantityTypeIdentifierStepCount" : category == .heart
                    ? "HKQuantityTypeIdentifierHeartRate" : "HKCategoryTypeIdentifierSleepAnalysis"
                let start = HealthTimestamp(seconds: Int64(1_706_745_600 + month * 31 * 86_400), utcOffset: 3600)
                let value: SampleValue = category == .sleep ? .category("HKCategoryValueSleepAnalysisAsleepCore")
                    : .quantity(DecimalValue(mantissa: Int64(60 + month), scale: 0), unit: category == .heart ? "count/min" : "count")
                return .sample(HealthSample(type: type, source: HealthSource(name: "Fuzz Watch"), start: start, end: start, value: value))
            }
        }
        try vault.append(samples)
        var seen = Set<String>()
        try vault.forEachEvent { _, event in seen.insert("\(event)") }
        events = seen
        pristine = try workspace.read("vault/keys.sealed")
        vaultID = try EventLog.open(in: workspace.vaultPath, masterKey: FuzzWorkspace.fixedMasterKey, mode: .readOnly).vaultID
    }

    func seeds() throws -> [FuzzSeed] {
        [FuzzSeed(name: "nine-labels.keys", bytes: pristine),
         FuzzSeed(name: "nine-labels.plaintext",
                  bytes: try KeyTable.plaintextForFuzzing(pristine, vaultID: vaultID, masterKey: FuzzWorkspace.fixedMasterKey))]
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        defer { _ = try? workspace.write(pristine, to: "vault/keys.sealed") }
        let asFile = try open(input)
        if asFile.isAccepted, input != pristine {
            throw FuzzInvariantViolation("a key table other than the one the head record names opened the vault")
        }
        let sealed = KeyTable.sealForFuzzing(plaintext: input, vaultID: vaultID, masterKey: FuzzWorkspace.fixedMasterKey)
        let parsed: FuzzOutcome
        do {
            try KeyTable.parseForFuzzing(sealed, vaultID: vaultID, masterKey: FuzzWorkspace.fixedMasterKey)
            parsed = .accepted
        } catch {
            parsed = .refused("\(error)")
        }
        // Sealed afresh, the table is not the head's: opening refuses it whether it parses or not.
        guard try !open(sealed).isAccepted else {
            throw FuzzInvariantViolation("a key table sealed afresh opened the vault though the head record names another")
        }
        return asFile.isAccepted ? asFile : parsed
    }

    private func open(_ bytes: [UInt8]) throws -> FuzzOutcome {
        _ = try workspace.write(bytes, to: "vault/keys.sealed")
        do {
            let vault = try Vault.open(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
            var unknown = 0
            try vault.forEachEvent { _, event in if !events.contains("\(event)") { unknown += 1 } }
            guard unknown == 0 else { throw FuzzInvariantViolation("a changed key table made the vault read \(unknown) event(s) it never held") }
            return .accepted
        } catch let violation as FuzzInvariantViolation {
            throw violation
        } catch let error as EventLogError {
            let message = "\(error)"
            guard message.contains("keys.sealed") || message.contains("events.log") else {
                throw FuzzInvariantViolation("a refused key table named neither the table nor the log: \(message)")
            }
            return .refused(message)
        } catch {
            return .refused("\(error)")
        }
    }
}
