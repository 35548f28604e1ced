import Foundation
import HealthModel

/// At what detail a consent lets data leave the vault.
public enum Granularity: String, CaseIterable, Sendable, Codable {
    /// Every sample as recorded.
    case raw
    /// Per local hour: deduplicated sums, or average/min/max.
    case hourly
    /// Per local day, as `summary` shows.
    case daily
}

/// A researcher the vault can export to: a name and an X25519 public key.
public struct RecipientRecord: Hashable, Sendable {
    public var at: Date
    public var name: String
    public var publicKey: [UInt8]

    public init(at: Date, name: String, publicKey: [UInt8]) {
        self.at = at
        self.name = name
        self.publicKey = publicKey
    }
}

/// One consent as the person gave it (`vaultctl grant`). Never edited: a later grant or a
/// revocation changes what is in force.
///
/// The fields follow FHIR R4 Consent's `provision`: `actor` (the recipient), `class` (the
/// categories), `dataPeriod` (from/to), `period` (granted until `expires`), `purpose`.
public struct ConsentGrant: Hashable, Sendable {
    /// 16 hex digits, random: how exports and revocations name it.
    public var id: String
    public var at: Date
    public var recipient: String
    public var categories: [HealthCategory]
    /// First and last local day of data covered (inclusive); nil is open-ended.
    public var from: LocalDay?
    public var to: LocalDay?
    public var granularity: Granularity
    /// Last local day the consent is in force (inclusive); nil never expires.
    public var expires: LocalDay?
    public var purpose: String?
    /// The types held under `other` when the grant was made, the only ones of `other` it lets
    /// leave: a type that arrives later under `other` needs a new grant. Nil for grants without
    /// `other`, and for those made before the list was kept (all of `other`, as they were shown).
    public var otherTypes: [String]?

    public init(id: String, at: Date, recipient: String, categories: [HealthCategory], from: LocalDay?, to: LocalDay?,
                granularity: Granularity, expires: LocalDay?, purpose: String?, otherTypes: [String]? = nil) {
        self.otherTypes = otherTypes
        self.id = id
        self.at = at
        self.recipient = recipient
        self.categories = categories
        self.from = from
        self.to = to
        self.granularity = granularity
        self.expires = expires
        self.purpose = purpose
    }

    /// Whether data of `type` in `category` may leave under this grant (in `other`, only the
    /// types the grant listed).
    public func admits(_ category: HealthCategory, type: String) -> Bool {
        category != .other || (otherTypes.map { $0.contains(type) } ?? true)
    }

    /// Whether a sample whose start falls on `day` lies inside the data period.
    public func covers(day: LocalDay) -> Bool {
        (from.map { day >= $0 } ?? true) && (to.map { day <= $0 } ?? true)
    }
}

/// A withdrawal (`vaultctl revoke`): of the listed categories, or of everything when nil.
public struct ConsentRevocation: Hashable, Sendable {
    public var at: Date
    public var recipient: String
    public var categories: [HealthCategory]?

    public init(at: Date, recipient: String, categories: [HealthCategory]?) {
        self.at = at
        self.recipient = recipient
        self.categories = categories
    }
}

/// What an export shipped: the audit record of `vaultctl export`.
public struct ExportRecord: Hashable, Sendable {
    public var at: Date
    public var recipient: String
    /// The grants the export relied on.
    public var consentIDs: [String]
    /// Lines per category.
    public var counts: [String: Int]
    /// BLAKE2b-256 of the whole bundle file, hex.
    public var bundleHash: String

    public init(at: Date, recipient: String, consentIDs: [String], counts: [String: Int], bundleHash: String) {
        self.at = at
        self.recipient = recipient
        self.consentIDs = consentIDs
        self.counts = counts
        self.bundleHash = bundleHash
    }
}
