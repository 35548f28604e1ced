import SecureMemory

/// The keys the log uses, all derived from the vault's master key.
///
/// Frames name their key by id. Only the main data key exists today; the id leaves room for
/// per-category keys, so that destroying one key erases a category without rewriting the log
/// (the chain still verifies, because it hashes ciphertext).
struct LogKeyring {
    let frameKeys: [UInt32: SecretKey]
    let headKey: SecretKey

    init(masterKey: SecretKey) {
        frameKeys = [LogFormat.mainDataKeyID: masterKey.derive(subkeyID: UInt64(LogFormat.mainDataKeyID), context: LogFormat.frameKeyContext)]
        headKey = masterKey.derive(subkeyID: 1, context: LogFormat.headKeyContext)
    }

    var writeKeyID: UInt32 { LogFormat.mainDataKeyID }
}
