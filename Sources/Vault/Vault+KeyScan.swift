import EventLog
import HealthModel
import VaultEvents

/// Reading some keys' frames only: a command that needs some categories' events decrypts those
/// categories' frames and no other (the frames' headers, whose chain `frameSummaries` checks,
/// say which key sealed each).
extension Vault {
    /// The live data keys of `categories`.
    func liveKeys(of categories: Set<HealthCategory>) -> Set<UInt32> {
        Self.liveKeys(log.dataKeys) { categories.contains($0.category) }
    }

    /// The keys of `keys` that are live and whose label `include` accepts.
    static func liveKeys(_ keys: [EventLog.DataKey], where include: (DataLabel) -> Bool) -> Set<UInt32> {
        Set(keys.compactMap { key in
            guard key.erasedAt == nil, let label = DataLabel(bytes: key.label), include(label) else { return nil }
            return key.id
        })
    }

    /// Calls `body` with the events `keys` sealed, and the audit events too when `audit`, in log
    /// order, each decoded with its key's tables. For a log of format 2 or later, where each key's
    /// frames define the strings its events use (`KeyScopedTables`): a writer upgrades a
    /// version-1 log when it opens it (export opens for writing), and tracker entries, the other
    /// reader, came after version 1.
    func forEachEvent(sealedBy keys: Set<UInt32>, audit: Bool = false, _ body: (UInt64, VaultEvent) throws -> Void) throws {
        let frames = try tables.frames().filter { keys.contains($0.keyID) || (audit && $0.keyID == EventLog.auditKeyID) }
        var decoders = KeyScopedTables.Decoders()
        try log.readFrames(frames) { frame in
            let decoder = decoders.decoder(for: frame)
            try frame.forEachEvent { index, bytes in
                if let event = try decoder.decode(bytes, index: index) { try body(index, event) }
            }
        }
    }
}
