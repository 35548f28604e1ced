import Envelope
import EventLog
import Foundation
import ResearchBundle
import SecureMemory
import VaultEvents

/// The vault's own keys: Ed25519 to sign bundles, X25519 to receive. Made at `init`, kept in
/// `identity.sealed` under the master key (docs/bundle-format.md).
public struct VaultIdentity: Sendable {
    public let signing: SigningKeyPair
    public let encryption: BoxKeyPair

    /// What a researcher compares (`Fingerprint.of`).
    public var fingerprint: String { Fingerprint.of(signingKey: signing.publicKey, encryptionKey: encryption.publicKey) }

    static func generate() -> VaultIdentity {
        VaultIdentity(signing: .generate(), encryption: .generate())
    }
}

extension IdentityRecord {
    init(_ identity: VaultIdentity, reason: Reason, at: Date) {
        self.init(at: at, reason: reason, signingKey: identity.signing.publicKey, encryptionKey: identity.encryption.publicKey)
    }

    /// The fingerprint of the identity recorded (`Fingerprint.of`).
    public var fingerprint: String { Fingerprint.of(signingKey: signingKey, encryptionKey: encryptionKey) }

    func matches(_ identity: VaultIdentity) -> Bool {
        signingKey == identity.signing.publicKey && encryptionKey == identity.encryption.publicKey
    }
}

extension Vault {
    public static let identityFileName = "identity.sealed"
    static let identityPurpose: UInt16 = 2

    var identityPath: String { directory + "/" + Self.identityFileName }
    /// A rotated identity waits here until its record is committed (`rotateIdentity`).
    var nextIdentityPath: String { identityPath + ".next" }

    /// The vault's identity, checked against the one the log records.
    ///
    /// - A vault made before identities were recorded gets its file's identity recorded
    ///   (`adopted`), or a new one (`created`) if it never had one, at the first write command
    ///   that asks.
    /// - A missing or different `identity.sealed` is refused when the log records an identity
    ///   (or an export, which was signed by one): a new signing key only comes through
    ///   `rotateIdentity`, in the audit trail.
    public func identity(ledger: ConsentLedger? = nil, now: Date = Date()) throws -> VaultIdentity {
        SealedSnapshot.removeLeftovers(of: identityPath, fileSystem: fileSystem)
        let ledger = try ledger ?? consentLedger()
        let writer = log.mode == .readWrite
        // Missing (nil), damaged (failure) or an identity.
        let file = Result { try readIdentity(at: identityPath) }
        if let recorded = ledger.identities.last {
            if case .success(let identity?) = file, recorded.matches(identity) {
                // A rotation that stopped before its record: the identity in force stands.
                if writer, fileSystem.exists(nextIdentityPath) { try fileSystem.remove(nextIdentityPath) }
                return identity
            }
            // A rotation whose record committed before its file was moved into place (also when
            // the old file is damaged or gone: rotating is how such a vault recovers).
            if let next = try? readIdentity(at: nextIdentityPath), recorded.matches(next) {
                if writer { try installNextIdentity() }
                return next
            }
            switch file {
            case .failure(let error): throw error
            case .success(nil): throw VaultError.identityMissing(path: identityPath, fingerprint: recorded.fingerprint)
            case .success(let identity?): throw VaultError.identityMismatch(recorded: recorded.fingerprint, found: identity.fingerprint)
            }
        }
        switch file {
        case .failure(let error):
            throw error
        case .success(let identity?):
            if writer {
                if fileSystem.exists(nextIdentityPath) { try fileSystem.remove(nextIdentityPath) }
                try append([.identityRecorded(IdentityRecord(identity, reason: .adopted, at: now))])
            }
            return identity
        case .success(nil):
            if ledger.exportCount > 0 { throw VaultError.identityMissing(path: identityPath, fingerprint: nil) }
            guard writer else { throw VaultError.noIdentity }
            let identity = VaultIdentity.generate()
            try writeIdentity(identity, to: identityPath)
            try append([.identityRecorded(IdentityRecord(identity, reason: .created, at: now))])
            return identity
        }
    }

    /// Replaces the vault's identity with a new one, recorded in the audit trail; recipients will
    /// see a new fingerprint. Works when `identity.sealed` is missing or damaged too: this is how
    /// a vault whose identity was lost signs again. The new identity is sealed beside the old
    /// (`identity.sealed.next`), its record committed, and only then moved into place, so a crash
    /// leaves either identity whole and in agreement with the log.
    @discardableResult
    public func rotateIdentity(now: Date = Date()) throws -> (old: String?, new: VaultIdentity) {
        guard log.mode == .readWrite else { throw EventLogError.readOnly }
        let old = try consentLedger().identities.last?.fingerprint
        let identity = VaultIdentity.generate()
        SealedSnapshot.removeLeftovers(of: nextIdentityPath, fileSystem: fileSystem)
        if fileSystem.exists(nextIdentityPath) { try fileSystem.remove(nextIdentityPath) }
        try writeIdentity(identity, to: nextIdentityPath)
        try append([.identityRecorded(IdentityRecord(identity, reason: .rotated, at: now))])
        try installNextIdentity()
        return (old, identity)
    }

    /// Moves a rotated identity whose record is committed into place, durably.
    private func installNextIdentity() throws {
        try fileSystem.rename(nextIdentityPath, to: identityPath)
        try fileSystem.syncDirectory(directory)
    }

    /// The identity sealed at `path`, nil when there is no file.
    private func readIdentity(at path: String) throws -> VaultIdentity? {
        let secretBytes = SigningKeyPair.secretKeyBytes + BoxKeyPair.secretKeyBytes
        let contents: SealedSnapshot.Contents?
        do {
            contents = try SealedSnapshot.read(from: path, purpose: Self.identityPurpose, vaultID: log.vaultID,
                                               masterKey: masterKey, fileSystem: fileSystem, limit: secretBytes)
        } catch is SealedSnapshot.Problem {
            throw VaultError.identityDamaged
        }
        guard let contents else { return nil }
        guard contents.plaintext.count == secretBytes else { throw VaultError.identityDamaged }
        let signing = contents.plaintext.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<64])) }
        let box = contents.plaintext.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[64..<96])) }
        return VaultIdentity(signing: try SigningKeyPair(secretKey: signing), encryption: try BoxKeyPair(secretKey: box))
    }

    func writeIdentity(_ identity: VaultIdentity, to path: String) throws {
        try Self.sealIdentity(identity, to: path, log: log, masterKey: masterKey, fileSystem: fileSystem)
    }

    /// Seals `identity` (docs/bundle-format.md, "Keys") under `masterKey` for `log`'s vault.
    static func sealIdentity(_ identity: VaultIdentity, to path: String, log: EventLog, masterKey: SecretKey, fileSystem: any FileSystem) throws {
        let secret = SecureBytes(count: 96) { out in
            identity.signing.secretKey.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[0..<64]).copyMemory(from: $0) }
            identity.encryption.secretKey.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[64..<96]).copyMemory(from: $0) }
        }
        try secret.withUnsafeBytes { plaintext in
            try SealedSnapshot.write(plaintext, purpose: Self.identityPurpose, position: log.genesis, vaultID: log.vaultID,
                                     masterKey: masterKey, to: path, fileSystem: fileSystem)
        }
    }
}
