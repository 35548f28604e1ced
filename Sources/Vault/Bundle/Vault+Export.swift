import Envelope
import EventLog
import Foundation
import HealthModel
import ResearchBundle
import SecureMemory
import VaultEvents

/// What `export` wrote.
public struct ExportSummary: Sendable {
    public var path: String
    public var recipient: String
    /// Lines per category.
    public var counts: [String: Int]
    public var files: [String]
    public var consentIDs: [String]
    /// BLAKE2b-256 of the bundle file, hex.
    public var bundleHash: String
    public var bytes: Int
    /// `--since-last`: the bundle this one follows, nil for a full export.
    public var follows: String?
}

extension Vault {
    /// Writes a bundle for `recipient` holding exactly what the consent in force covers: the
    /// granted categories, samples inside the data period, at the granted granularity. Refuses,
    /// writing nothing, when no consent is in force. The export is recorded in the log before the
    /// bundle appears under its name.
    /// `sinceLast`: only what the last bundle to `recipient` did not hold (`SinceLast`); its
    /// manifest names that bundle (`follows`). Without an earlier bundle it is a full export.
    /// `format`: the data files as the lines themselves (ndjson), FHIR R4 Observations or Open
    /// mHealth data points (`StandardFormat`).
    public func export(to recipient: String, path: String, csv: Bool = false, sinceLast: Bool = false, format: StandardFormat = .ndjson,
                       now: Date = Date(), today: LocalDay? = nil) throws -> ExportSummary {
        guard !FileManager.default.fileExists(atPath: path) else { throw VaultError.fileExists(path: path) }
        let ledger = try consentLedger()
        guard let record = ledger.recipients[recipient] else { throw VaultError.unknownRecipient(name: recipient) }
        let inForce = ledger.inForce(for: recipient, on: today ?? LocalDay.today(now: now))
        guard !inForce.isEmpty else { throw VaultError.noConsentInForce(recipient: recipient) }
        let identity = try identity(ledger: ledger, now: now)
        let position = log.committed
        let since = sinceLast ? try SinceLast(vault: self, recipient: recipient, categories: Set(inForce.keys)) : nil
        let plan = ExportPlan(grants: inForce, trackerCategories: try trackerCategories(), dataKeys: log.dataKeys, erased: erasedLabels(), since: since)
        var files: [HealthCategory: DataFileLines] = [:]
        for (category, grant) in inForce {
            files[category] = DataFileLines(format: format, csv: csv, figures: grant.granularity != .raw, granularity: grant.granularity, createdAt: now,
                                            salt: Array("\(identity.fingerprint)\u{0}\(now.timeIntervalSince1970)\u{0}\(category.rawValue)".utf8))
        }
        try withReadModels { models in
            let emit: ExportPlan.Emit = { category, line in try files[category]!.append(line) }
            try plan.figures(from: models, emit)
            try plan.scannedLines(vault: self, models: models, emit)
        }
        var dataFiles: [BundleDraft.DataFile] = []
        for category in plan.categories {
            let grant = inForce[category]!, lines = files[category]!
            let base = "data/\(category.rawValue)"
            dataFiles.append(BundleDraft.DataFile(path: base + format.suffix, category: category.rawValue, granularity: grant.granularity.rawValue,
                                                  format: format.rawValue, lines: lines.count, bytes: lines.bytes))
            if let csvBytes = lines.csvBytes {
                dataFiles.append(BundleDraft.DataFile(path: base + ".csv", category: category.rawValue, granularity: grant.granularity.rawValue,
                                                      format: "csv", lines: lines.count, bytes: csvBytes))
            }
        }
        let grants = Array(Set(inForce.values)).sorted { $0.at < $1.at }
        let counts = Dictionary(uniqueKeysWithValues: files.map { ($0.key.rawValue, $0.value.count) })
        var draft = BundleDraft(
            createdAt: now, recipientName: recipient, recipientKey: record.publicKey, chainHash: position.chainHash.hex,
            consents: grants.map { grant in
                // The receipt names only what this grant still covers now (not revoked, not superseded).
                ConsentReceipt(grant, categories: inForce.filter { $0.value.id == grant.id }.keys.sorted { $0.rawValue < $1.rawValue })
            },
            files: dataFiles, counts: counts)
        draft.follows = since?.follows
        let stream = try draft.entries(signedBy: identity.signing, encryptionKey: identity.encryption.publicKey)

        let temporary = path + ".tmp." + RandomBytes.make(8).hex
        let (hash, bytes) = try BundleWriter.write(stream, recipientKey: record.publicKey,
                                                   to: temporary, fileSystem: fileSystem)
        do {
            try append([.exportPerformed(ExportRecord(at: now, recipient: recipient, consentIDs: grants.map(\.id), counts: counts, bundleHash: hash))])
            // link(2) refuses an existing name: a file that appeared at `path` meanwhile is kept.
            do {
                try fileSystem.link(temporary, to: path)
            } catch StorageError.alreadyExists {
                throw VaultError.fileExists(path: path)
            } catch {
                throw VaultError.cannotWrite(path: path, reason: "cannot be created: \(error)")
            }
            // The name is durable before the export is acknowledged.
            do {
                try fileSystem.syncDirectory(directoryName(of: path))
            } catch {
                throw VaultError.cannotWrite(path: path, reason: "was written but its folder could not be synced: \(error)")
            }
            // A second name of the same, audited bundle if this fails: nothing to undo.
            try? fileSystem.remove(temporary)
        } catch {
            try? fileSystem.remove(temporary)
            throw error
        }
        return ExportSummary(path: path, recipient: recipient, counts: counts, files: dataFiles.map(\.path),
                             consentIDs: grants.map(\.id), bundleHash: hash, bytes: bytes, follows: since?.follows)
    }
}

extension ConsentReceipt {
    /// The FHIR receipt of `grant`, for the `categories` of it in force.
    init(_ grant: ConsentGrant, categories: [HealthCategory]) {
        self.init(id: grant.id, at: grant.at, recipient: grant.recipient, categories: categories.map(\.rawValue),
                  granularity: grant.granularity.rawValue, from: grant.from?.description, to: grant.to?.description,
                  expires: grant.expires?.description, purpose: grant.purpose)
    }
}
