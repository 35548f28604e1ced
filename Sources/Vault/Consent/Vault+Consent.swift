import Envelope
import EventLog
import Foundation
import HealthModel
import Projections
import ResearchBundle
import SecureMemory
import VaultEvents

extension Vault {
    /// Recipients and consents, replayed from the log's audit events.
    public func consentLedger() throws -> ConsentLedger {
        var ledger = ConsentLedger()
        try forEachAuditEvent { _, event in ledger.apply(event) }
        return ledger
    }

    /// Adds a researcher by name with the public key from a `.pub` file written by `keygen`.
    public func addRecipient(name: String, publicKeyFile: String, now: Date = Date()) throws {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 200, !trimmed.contains(where: \.isNewline) else {
            throw VaultError.invalidConsent(reason: "a recipient name must be 1 to 200 characters on one line")
        }
        guard !RecipientName.hasInvisibleCharacters(trimmed) else {
            throw VaultError.invalidConsent(reason: "a recipient name may not hold control, invisible or direction-changing characters")
        }
        let key = try RecipientKeyFiles.readPublicKey(publicKeyFile)
        let ledger = try consentLedger()
        if let existing = ledger.recipients[trimmed] {
            guard existing.publicKey == key else { throw VaultError.recipientExists(name: trimmed) }
            return
        }
        let skeleton = RecipientName.skeleton(trimmed)
        if let lookalike = ledger.recipients.keys.sorted().first(where: { RecipientName.skeleton($0) == skeleton }) {
            throw VaultError.recipientLookalike(name: trimmed, existing: lookalike)
        }
        _ = try identity(ledger: ledger, now: now)
        try append([.recipientAdded(RecipientRecord(at: now, name: trimmed, publicKey: key))])
    }

    /// Records a consent. Categories are the spec's names; the recipient must have been added.
    @discardableResult
    public func grant(
        recipient: String, categories: [HealthCategory], from: LocalDay?, to: LocalDay?,
        granularity: Granularity, expires: LocalDay?, purpose: String?, now: Date = Date()
    ) throws -> ConsentGrant {
        guard try consentLedger().recipients[recipient] != nil else { throw VaultError.unknownRecipient(name: recipient) }
        guard !categories.isEmpty else { throw VaultError.invalidConsent(reason: "name at least one category (--categories activity,heart,...)") }
        if let from, let to, to < from { throw VaultError.invalidConsent(reason: "--to \(to) is before --from \(from)") }
        if let purpose, purpose.count > 1000 { throw VaultError.invalidConsent(reason: "the purpose is longer than 1000 characters") }
        if let expires, expires < LocalDay.today(now: now) {
            throw VaultError.invalidConsent(reason: "--expires \(expires) is already past: the consent would never be in force")
        }
        // At the log's resolution (milliseconds), so the grant returned equals the one read back.
        let at = Date(timeIntervalSince1970: Double(Int64((now.timeIntervalSince1970 * 1000).rounded())) / 1000)
        // `other` is what matched no known type: a grant of it covers the types it holds now, as
        // `grant` shows them, and no type that arrives later.
        let otherTypes = categories.contains(.other) ? try typesHeld(in: .other).map(\.type).sorted() : nil
        let grant = ConsentGrant(
            id: RandomBytes.make(8).hex, at: at, recipient: recipient,
            categories: Array(Set(categories)).sorted { $0.rawValue < $1.rawValue },
            from: from, to: to, granularity: granularity, expires: expires, purpose: purpose, otherTypes: otherTypes)
        try append([.consentGranted(grant)])
        return grant
    }

    /// Withdraws consent: the listed categories, or all of it.
    public func revoke(recipient: String, categories: [HealthCategory]?, now: Date = Date()) throws {
        let ledger = try consentLedger()
        guard ledger.recipients[recipient] != nil else { throw VaultError.unknownRecipient(name: recipient) }
        try append([.consentRevoked(ConsentRevocation(at: now, recipient: recipient, categories: categories))])
    }

    /// The audit trail: every audit event with its sequence number (no sample values).
    public func history() throws -> [(index: UInt64, event: VaultEvent)] {
        var result: [(UInt64, VaultEvent)] = []
        try forEachAuditEvent { index, event in result.append((index, event)) }
        return result
    }
}

extension HealthCategory {
    /// Parses `activity,heart` into categories; unknown names are refused.
    public static func parseList(_ text: String) throws -> [HealthCategory] {
        try text.split(separator: ",").map { raw in
            let name = raw.trimmingCharacters(in: .whitespaces)
            guard let category = HealthCategory(rawValue: name) else { throw VaultError.unknownCategory(name: name) }
            return category
        }
    }
}

extension LocalDay {
    /// Today in the machine's time zone.
    public static func today(now: Date = Date(), timeZone: TimeZone = .current) -> LocalDay {
        LocalDay(instant: Int64(now.timeIntervalSince1970.rounded(.down)), utcOffset: Int32(timeZone.secondsFromGMT(for: now)))
    }
}

extension Vault {
    /// The sample types the vault keeps under `category`, with how many samples of each, most
    /// first: what a grant of it would let leave (`grant other`, `consents` show it for `other`).
    /// Reads the whole log: only asked when a grant names the category.
    public func typesHeld(in category: HealthCategory) throws -> [(type: String, count: Int)] {
        var counts: [String: Int] = [:]
        var last = ("", false)
        try forEachEvent { _, event in
            switch event {
            case .sample(let sample):
                if sample.type != last.0 { last = (sample.type, sample.category == category) }
                if last.1 { counts[sample.type, default: 0] += 1 }
            case .correlation, .genericRecord:
                guard let label = DataLabel.of(event), label.category == category, let type = RecordLines.typeName(of: event) else { return }
                counts[type, default: 0] += 1
            default:
                return
            }
        }
        return counts.map { (type: $0.key, count: $0.value) }.sorted { ($0.count, $1.type) > ($1.count, $0.type) }
    }
}
