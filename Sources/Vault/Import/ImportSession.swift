import EventLog
import Foundation

/// One `import` command: a single log transaction for all its files, so that a failure leaves
/// the vault as it was, and the identities of every data event already in the vault, so that
/// importing the same data again adds nothing.
///
/// Identities are 64-bit hashes of each event's identifying prefix (`IdentitySet`), rebuilt from
/// the log when the session starts: 8–16 bytes of memory per event in the vault.
final class ImportSession {
    let log: EventLog
    let encoder: EventEncoder
    private var identities: IdentitySet
    private var transaction: LogTransaction
    private(set) var file = FileImportReport(path: "", format: "")

    init(log: EventLog, encoder: EventEncoder, identities: IdentitySet) throws {
        self.log = log
        self.encoder = encoder
        self.identities = identities
        self.transaction = try log.beginTransaction()
    }

    func startFile(path: String, format: String) {
        file = FileImportReport(path: path, format: format)
    }

    /// Adds an event unless the vault already has it. Records nested in a correlation that are
    /// already present (as they are: the export repeats them at top level) are not counted.
    func add(_ event: VaultEvent, nested: Bool = false) throws {
        var writer = encoder.encodeIdentity(event)
        if !event.isAudit {
            let isNew = writer.bytes.withUnsafeBytes { identities.insert($0) }
            guard isNew else {
                if !nested { file.duplicates += 1 }
                try flushDefinitions()
                return
            }
            file.added += 1
        }
        encoder.encodeRest(event, into: &writer)
        // Definitions go out before the event that needs them, and whatever happens to it:
        // the encoder has assigned their ids.
        try flushDefinitions()
        try writer.bytes.withUnsafeBytes { try log.append($0, to: &transaction) }
    }

    private func flushDefinitions() throws {
        for definition in encoder.takeDefinitions() {
            try definition.withUnsafeBytes { try log.append($0, to: &transaction) }
        }
    }

    func reject(_ count: Int) { file.rejected += count }
    func warn(_ message: String) { file.warnings.append(message) }

    /// Records the file in the audit trail and returns its report.
    func finishFile(displayName: String) throws -> FileImportReport {
        try add(.importRecorded(at: Date(), ImportRecord(
            file: displayName, format: file.format, added: file.added, duplicates: file.duplicates, rejected: file.rejected)))
        return file
    }

    func commit() throws { try log.commit(&transaction) }
    func rollback() { try? log.rollback(&transaction) }
}
