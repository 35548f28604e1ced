import Envelope
import SecureMemory
import Foundation
import VaultEvents

/// The companion apps paired with the vault, as the audit trail records them (`companion pair`,
/// `companion revoke`). A token is known only by its hash (BLAKE2b-256 of its text), so a copy of
/// the log gives no working token.
public struct CompanionRegistry: Sendable {
    /// One paired app.
    public struct App: Sendable, Equatable {
        public var name: String
        public var pairedAt: Date
        /// When its token was revoked; nil while it works.
        public var revokedAt: Date?
        var tokenHash: [UInt8]
    }

    /// Every app ever paired, the latest pairing of each name, by name.
    public private(set) var apps: [String: App] = [:]
    private var byTokenHash: [[UInt8]: String] = [:]

    public init() {}

    mutating func apply(_ event: VaultEvent) {
        switch event {
        case .companionPaired(let p):
            if let previous = apps[p.name] { byTokenHash[previous.tokenHash] = nil }
            apps[p.name] = App(name: p.name, pairedAt: p.at, revokedAt: nil, tokenHash: p.tokenHash)
            byTokenHash[p.tokenHash] = p.name
        case .companionRevoked(let r):
            guard var app = apps[r.name], app.revokedAt == nil else { return }
            app.revokedAt = r.at
            apps[r.name] = app
            byTokenHash[app.tokenHash] = nil
        default:
            break
        }
    }

    /// The app whose token this is, nil for an unknown or revoked token. The token is hashed
    /// first, so the lookup's timing says nothing about the stored hashes.
    public func app(forToken token: String) -> App? {
        guard !token.isEmpty, token.utf8.count <= 256 else { return nil }
        return byTokenHash[Self.hash(token)].flatMap { apps[$0] }
    }

    /// The app whose token hashes to `tokenHash`, nil for an unknown or revoked one.
    func app(forTokenHash tokenHash: [UInt8]) -> App? {
        byTokenHash[tokenHash].flatMap { apps[$0] }
    }

    /// Apps whose token works, sorted by name.
    public var active: [App] { apps.values.filter { $0.revokedAt == nil }.sorted { $0.name < $1.name } }

    static func hash(_ token: String) -> [UInt8] { Digest.of(Array(token.utf8)) }

    /// A new token: "hv_" and 32 random bytes in base64url (no padding).
    static func newToken() -> String {
        let raw = RandomBytes.make(32)
        let base64 = Data(raw).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "hv_" + base64
    }
}
