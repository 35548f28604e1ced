import SecureMemory

/// A passphrase from a literal, as tests use them.
public func passphrase(_ text: String) -> Passphrase {
    var bytes = Array(text.utf8)
    return Passphrase(consuming: &bytes)
}
