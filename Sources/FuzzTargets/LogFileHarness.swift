import EventLog
import Foundation
import HealthModel
import Projections
import Vault

/// Feeds whole `events.log` files, with their head records, to the log's reader, its verifier
/// and a writer.
///
/// Promises checked after each input:
/// - a log that `verify` passes reads back in full, as many events as it counted, each decoding;
/// - a log that verified and that a writer agrees to open takes an append, and verifies
///   afterwards with more events than were committed before (torn tails cut, no committed frame
///   cut with them);
/// - a log damaged before its head (which a writer opens, checking only the tail) still fails
///   `verify` after whatever the writer did: nothing damaged is hidden under new frames.
final class LogFileHarness: FuzzHarness {
    private let workspace: FuzzWorkspace
    /// Every file of the vault after setup (keyslot, identity, head, projection image), put back
    /// before each input so that one input's leftovers never change how the next one runs.
    private let pristineFiles: [String: [UInt8]]

    init(workspace path: String) throws {
        workspace = FuzzWorkspace(path: path)
        let vault = try workspace.fixedKeyVault()
        // A few commits of different kinds, so the seed has several frames and a chain.
        for (index, hour) in [8, 9].enumerated() {
            let csv = "type,start,end,value,unit,source\nsteps,2025-08-06 0\(hour):00,2025-08-06 0\(hour):30,\(40 + index),count,Phone\n"
            _ = try vault.importFiles([try workspace.write(Array(csv.utf8), to: "seed-\(index).csv")], timeZone: TimeZone(identifier: "UTC")!)
            _ = try vault.setGoal(.move, value: Double(400 + 10 * index), from: LocalDay(year: 2025, month: 8, day: 1),
                                 now: Date(timeIntervalSince1970: 1_754_000_000 + Double(index)))
        }
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: workspace.vaultPath) where name != "events.lock" {
            files[name] = try workspace.read("vault/" + name)
        }
        pristineFiles = files
    }

    func seeds() throws -> [FuzzSeed] {
        [FuzzSeed(name: "four-commits", bytes: Self.input(head: pristineFiles["events.head"] ?? [], log: pristineFiles["events.log"] ?? []))]
    }

    /// An input is the head record and the log together (head length u16 LE, head, log): the head
    /// authenticates a position in one particular log, so the two are kept, and mutated, as a pair.
    static func input(head: [UInt8], log: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt16(head.count).littleEndian, Array.init) + head + log
    }

    func run(_ input: [UInt8]) throws -> FuzzOutcome {
        let headLength = input.count >= 2 ? Int(input[0]) | Int(input[1]) << 8 : 0
        let head = input.count >= 2 + headLength ? Array(input[2..<2 + headLength]) : []
        let log = Array(input.dropFirst(2 + head.count))
        try restore(head: head, log: log)
        // Reading writes nothing, so the writer then opens the same files.
        let (outcome, committed) = try readEverything()
        try appendIfAWriterOpens(committedBefore: committed, verified: outcome.isAccepted)
        return outcome
    }

    private func restore(head: [UInt8], log: [UInt8]) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: workspace.vaultPath)
        where pristineFiles[name] == nil && name != "events.lock" {
            try FileManager.default.removeItem(atPath: workspace.vaultPath + "/" + name)
        }
        for (name, bytes) in pristineFiles where name != "events.log" && name != "events.head" {
            try workspace.write(bytes, to: "vault/" + name)
        }
        try workspace.write(head, to: "vault/events.head")
        try workspace.write(log, to: "vault/events.log")
    }

    /// Reads the log every way; also returns the committed events `verify` counted, if it ran.
    private func readEverything() throws -> (FuzzOutcome, UInt64?) {
        let report: VerificationReport
        do {
            report = try Vault.verify(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
        } catch {
            return (.refused("\(error)"), nil)
        }
        return (try readAll(verified: report), report.events)
    }

    private func readAll(verified report: VerificationReport) throws -> FuzzOutcome {
        var frameEvents: UInt64 = 0
        do {
            let log = try EventLog.open(in: workspace.vaultPath, masterKey: FuzzWorkspace.fixedMasterKey, mode: .readOnly)
            var reader = try log.reader()
            while let frame = try reader.next() { frame.forEachEvent { _, _ in frameEvents += 1 } }
            let vault = try Vault.open(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
            try vault.forEachEvent { _, _ in }
        } catch {
            guard report.isOK else { return .refused("\(error)") }
            throw FuzzInvariantViolation("verify passed, yet reading the log failed: \(error)")
        }
        guard report.isOK else { return .refused(report.problems.joined(separator: "; ")) }
        guard frameEvents == report.events else {
            throw FuzzInvariantViolation("verify counted \(report.events) events, reading found \(frameEvents)")
        }
        return .accepted
    }

    /// A writer that opens the log keeps every committed event and adds the new one after them.
    private func appendIfAWriterOpens(committedBefore: UInt64?, verified: Bool) throws {
        let vault: Vault
        do {
            vault = try Vault.open(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase(), mode: .readWrite)
        } catch {
            return
        }
        do {
            _ = try vault.setGoal(.stand, value: 11, from: LocalDay(year: 2025, month: 8, day: 2))
        } catch {
            // Appending reads the audit key's frames (the encoder's tables): damage there refuses.
            guard verified else { return }
            throw FuzzInvariantViolation("a writer opened the log but could not append: \(error)")
        }
        let report = try Vault.verify(at: workspace.vaultPath, passphrase: FuzzWorkspace.passphrase())
        guard verified else {
            guard !report.isOK else { throw FuzzInvariantViolation("an append hid the damage of a log that did not verify") }
            return
        }
        guard report.isOK else {
            throw FuzzInvariantViolation("after an append the log does not verify: \(report.problems.joined(separator: "; "))")
        }
        if let committedBefore, report.events <= committedBefore {
            throw FuzzInvariantViolation("a writer kept \(report.events) events of \(committedBefore) committed, with its append")
        }
    }
}
