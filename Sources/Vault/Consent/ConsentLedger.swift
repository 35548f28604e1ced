import Foundation
import HealthModel
import Projections
import VaultEvents

/// Recipients and consents as the log records them, replayed in order. Consent is never edited:
/// what is in force follows from the grants and revocations and the day it is asked on.
public struct ConsentLedger: Sendable {
    /// Recipients by name.
    public private(set) var recipients: [String: RecipientRecord] = [:]
    /// Every grant and revocation, oldest first.
    public private(set) var changes: [Change] = []
    /// The vault's signing identities as the log records them, oldest first; the last is in force.
    public private(set) var identities: [IdentityRecord] = []
    /// How many bundles were exported (each signed by the identity of its day).
    public private(set) var exportCount = 0
    /// Every erasure, oldest first.
    public private(set) var erasures: [ErasureRecord] = []

    public enum Change: Hashable, Sendable {
        case granted(ConsentGrant)
        case revoked(ConsentRevocation)
    }

    public init() {}

    public mutating func apply(_ event: VaultEvent) {
        switch event {
        case .recipientAdded(let r): recipients[r.name] = r
        case .consentGranted(let g): changes.append(.granted(g))
        case .consentRevoked(let r): changes.append(.revoked(r))
        case .identityRecorded(let i): identities.append(i)
        case .erased(let e): erasures.append(e)
        case .exportPerformed: exportCount += 1
        default: break
        }
    }

    /// Per category, the grant in force for `recipient` on local day `today`: the latest grant
    /// naming the category, unless a later revocation withdrew it or it expired before today.
    public func inForce(for recipient: String, on today: LocalDay) -> [HealthCategory: ConsentGrant] {
        var current: [HealthCategory: ConsentGrant] = [:]
        for change in changes {
            switch change {
            case .granted(let g) where g.recipient == recipient:
                for c in g.categories { current[c] = g }
            case .revoked(let r) where r.recipient == recipient:
                if let categories = r.categories { for c in categories { current[c] = nil } } else { current = [:] }
            default:
                break
            }
        }
        return current.filter { _, grant in grant.expires.map { today <= $0 } ?? true }
    }

    /// Every recipient's consents in force, one entry per grant with the categories still covered.
    public func allInForce(on today: LocalDay) -> [(grant: ConsentGrant, categories: [HealthCategory])] {
        var result: [(ConsentGrant, [HealthCategory])] = []
        for name in Set(changes.map(\.recipient)).sorted() {
            let byGrant = Dictionary(grouping: inForce(for: name, on: today), by: { $0.value.id })
            for (_, entries) in byGrant.sorted(by: { $0.value[0].value.at < $1.value[0].value.at }) {
                result.append((entries[0].value, entries.map(\.key).sorted { $0.rawValue < $1.rawValue }))
            }
        }
        return result
    }
}

extension ConsentLedger.Change {
    var recipient: String {
        switch self {
        case .granted(let g): g.recipient
        case .revoked(let r): r.recipient
        }
    }
}
