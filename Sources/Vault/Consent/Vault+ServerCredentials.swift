import EventLog
import SecureMemory

/// The companion server's TLS certificate and private key, made once per vault and kept sealed
/// under the master key beside the identity (`server-tls.sealed`, docs/companion.md). The vault
/// only stores the bytes; `CompanionServer` makes and reads them.
extension Vault {
    public static let serverCredentialsFileName = "server-tls.sealed"
    static let serverCredentialsPurpose: UInt16 = 4
    /// Far more than a certificate and a key take.
    static let serverCredentialsLimit = 64 << 10

    var serverCredentialsPath: String { directory + "/" + Self.serverCredentialsFileName }

    /// The sealed credentials' bytes, nil when the vault has none yet.
    public func serverCredentials() throws -> SecureBytes? {
        do {
            return try SealedSnapshot.read(from: serverCredentialsPath, purpose: Self.serverCredentialsPurpose, vaultID: log.vaultID,
                                           masterKey: masterKey, fileSystem: fileSystem, limit: Self.serverCredentialsLimit)?.plaintext
        } catch let problem as SealedSnapshot.Problem {
            throw VaultError.cannotRead(path: serverCredentialsPath, reason: problem.description)
        }
    }

    /// Seals `bytes` as the vault's server credentials, replacing any (atomically, durably).
    public func storeServerCredentials(_ bytes: SecureBytes) throws {
        try Self.sealServerCredentials(bytes, to: serverCredentialsPath, log: log, masterKey: masterKey, fileSystem: fileSystem)
    }

    static func sealServerCredentials(_ bytes: SecureBytes, to path: String, log: EventLog, masterKey: SecretKey, fileSystem: any FileSystem) throws {
        try bytes.withUnsafeBytes { plaintext in
            try SealedSnapshot.write(plaintext, purpose: serverCredentialsPurpose, position: log.genesis, vaultID: log.vaultID,
                                     masterKey: masterKey, to: path, fileSystem: fileSystem)
        }
    }
}
