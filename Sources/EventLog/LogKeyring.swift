import SecureMemory

/// The keys the log uses: the audit key and the head record's key, derived from the vault's
/// master key, and the data keys of the key table (`KeyTable`), random and destroyable.
///
/// Frames name their key by id. A frame whose key was destroyed (erased) is still read for its
/// place in the chain, which hashes ciphertext, but its events are gone for good.
struct LogKeyring {
    private(set) var frameKeys: [UInt32: SecretKey]
    /// Ids whose keys were destroyed.
    private(set) var erasedKeyIDs: Set<UInt32>
    let headKey: SecretKey
    let tableKey: SecretKey
    /// The master key, which snapshots (the frame index) derive their own keys from.
    let masterKey: SecretKey

    init(masterKey: SecretKey, table: KeyTable = KeyTable()) {
        self.masterKey = masterKey
        headKey = masterKey.derive(subkeyID: 1, context: LogFormat.headKeyContext)
        tableKey = masterKey.derive(subkeyID: 1, context: KeyTable.keyContext)
        frameKeys = [LogFormat.auditKeyID: masterKey.derive(subkeyID: UInt64(LogFormat.auditKeyID), context: LogFormat.frameKeyContext)]
        erasedKeyIDs = []
        use(table)
    }

    /// The table's keys only: those of an earlier table that it lacks are forgotten.
    mutating func reset(to table: KeyTable) {
        frameKeys = frameKeys.filter { $0.key < KeyTable.firstID }
        erasedKeyIDs = []
        use(table)
    }

    /// Takes the table's keys: live ones become usable, destroyed ones are forgotten.
    mutating func use(_ table: KeyTable) {
        for entry in table.entries {
            if let key = entry.key {
                frameKeys[entry.id] = key
            } else {
                frameKeys[entry.id] = nil
                erasedKeyIDs.insert(entry.id)
            }
        }
    }
}
