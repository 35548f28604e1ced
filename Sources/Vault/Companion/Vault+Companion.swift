import EventLog
import Foundation
import HealthModel
import SecureMemory
import VaultEvents

extension Vault {
    /// The companion apps as the audit trail records them (reads the audit key's frames only).
    public func companionRegistry() throws -> CompanionRegistry {
        var registry = CompanionRegistry()
        try forEachAuditEvent { _, event in registry.apply(event) }
        return registry
    }

    /// Pairs a companion app: a new random token, of which only the hash is recorded. The token is
    /// returned once; it cannot be shown again.
    public func pairCompanion(name: String, now: Date = Date()) throws -> (token: String, app: CompanionRegistry.App) {
        try Self.checkCompanionName(name)
        var registry = try companionRegistry()
        if let existing = registry.apps[name], existing.revokedAt == nil { throw VaultError.companionExists(name: name) }
        let token = CompanionRegistry.newToken()
        let event = VaultEvent.companionPaired(CompanionPairing(at: now, name: name, tokenHash: CompanionRegistry.hash(token)))
        try append([event])
        registry.apply(event)
        return (token, registry.apps[name]!)
    }

    /// Revokes a companion app's token; posts with it are refused from then on.
    public func revokeCompanion(name: String, now: Date = Date()) throws {
        let registry = try companionRegistry()
        guard let app = registry.apps[name], app.revokedAt == nil else { throw VaultError.unknownCompanion(name: name) }
        try append([.companionRevoked(CompanionRevocation(at: now, name: app.name))])
    }

    /// Names are shown in lists and used as sources.
    static func checkCompanionName(_ name: String) throws {
        if let problem = displayNameProblem(name) { throw VaultError.invalidCompanionName(reason: problem) }
    }

    /// Why a name a person gives (a companion app's, a tracker's) cannot be shown in lists,
    /// sources and bundles; nil when it can: 1 to 64 characters, no control or format characters,
    /// no leading or trailing spaces.
    static func displayNameProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.count <= 64 else { return "use 1 to 64 characters" }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) else {
            return "control characters are not allowed"
        }
        guard name.trimmingCharacters(in: .whitespaces) == name else { return "no leading or trailing spaces" }
        return nil
    }
}

extension Vault {
    /// The latest end of `metric`'s samples from the paired app `app` (their device's name), read
    /// from the metric's category, newest month first, until a month holds one.
    func latestEnd(of metric: String, fromApp app: String) throws -> HealthTimestamp? {
        let category = HealthCategory.of(type: metric)
        let months = log.dataKeys.compactMap { key -> (month: LocalMonth, id: UInt32)? in
            guard key.erasedAt == nil, let label = DataLabel(bytes: key.label), label.category == category, let month = label.month else { return nil }
            return (month, key.id)
        }.sorted { $0.month > $1.month }
        let frames = try tables.frames()
        for key in months {
            let decoder = EventDecoder()
            var latest: HealthTimestamp?
            try log.readFrames(frames.filter { $0.keyID == key.id }) { frame in
                try frame.forEachEvent { index, bytes in
                    guard let event = try decoder.decode(bytes, index: index), case .sample(let s) = event,
                          s.type == metric, s.source.device?.name == app else { return }
                    if latest.map({ $0.seconds < s.end.seconds }) ?? true { latest = s.end }
                }
            }
            if let latest { return latest }
        }
        return nil
    }

    /// A read-only handle on this vault with the master key this one holds (no key derivation).
    func openedReadOnly() throws -> Vault {
        Vault(directory: directory, log: try EventLog.open(in: directory, masterKey: masterKey, mode: .readOnly, fileSystem: fileSystem, unheadedCommit: Vault.judgeUnheadedCommit),
              masterKey: masterKey, fileSystem: fileSystem)
    }

    /// A second handle on this vault for writing, with the master key this one holds (no key
    /// derivation); throws when the key no longer opens the log (it was re-keyed).
    func reopenedForWriting() throws -> Vault {
        let log = try EventLog.open(in: directory, masterKey: masterKey, mode: .readWrite, fileSystem: fileSystem, unheadedCommit: Vault.judgeUnheadedCommit)
        let vault = Vault(directory: directory, log: log, masterKey: masterKey, fileSystem: fileSystem)
        try vault.finishOpeningForWriting()
        return vault
    }
}
