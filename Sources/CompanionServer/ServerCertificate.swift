import Crypto
import Foundation
import NIOSSL
import SecureMemory
import SwiftASN1
import Vault
import X509

/// The TLS certificate `vaultctl serve` presents: self-signed, made once per vault (a P-256 key,
/// ten years), kept sealed in the vault (`server-tls.sealed`). Phones do not check it against
/// a CA: the pairing QR code carries its SHA-256, which the companion app pins.
///
/// Sealed layout (docs/companion.md): version byte 1, the certificate's DER length as 4 bytes
/// little-endian, the DER, then the private key's 32-byte raw scalar.
public struct ServerCertificate {
    /// The certificate, DER-encoded.
    public let der: [UInt8]
    /// SHA-256 of `der`, lowercase hex: what a companion app pins.
    public var sha256: String { SHA256.hash(data: der).map { String(format: "%02x", $0) }.joined() }
    let privateKey: P256.Signing.PrivateKey

    static let formatVersion: UInt8 = 1

    /// The vault's certificate, made and sealed the first time (the vault must be open for writing then).
    public static func loadOrCreate(in vault: Vault, now: Date = Date()) throws -> ServerCertificate {
        if let existing = try load(from: vault) { return existing }
        let made = try make(now: now)
        try vault.storeServerCredentials(made.sealedForm())
        return made
    }

    /// The vault's certificate, nil when none was made yet.
    public static func load(from vault: Vault) throws -> ServerCertificate? {
        guard let bytes = try vault.serverCredentials() else { return nil }
        return try bytes.withUnsafeBytes { raw -> ServerCertificate in
            guard raw.count > 5, raw[0] == formatVersion else { throw CredentialsDamaged() }
            let length = Int(raw[1]) | Int(raw[2]) << 8 | Int(raw[3]) << 16 | Int(raw[4]) << 24
            guard raw.count == 5 + length + 32 else { throw CredentialsDamaged() }
            let der = Array(raw[5..<(5 + length)])
            do {
                let key = try P256.Signing.PrivateKey(rawRepresentation: raw[(5 + length)...])
                return ServerCertificate(der: der, privateKey: key)
            } catch {
                throw CredentialsDamaged()
            }
        }
    }

    /// A new self-signed certificate for `localhost` and the loopback addresses.
    static func make(now: Date) throws -> ServerCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            CommonName("healthvault companion endpoint")
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(10 * 366 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                KeyUsage(digitalSignature: true)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return ServerCertificate(der: serializer.serializedBytes, privateKey: key)
    }

    func sealedForm() -> SecureBytes {
        let raw = privateKey.rawRepresentation
        let count = 5 + der.count + raw.count
        return SecureBytes(count: count) { out in
            out[0] = Self.formatVersion
            for i in 0..<4 { out[1 + i] = UInt8(truncatingIfNeeded: der.count >> (8 * i)) }
            der.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[5..<(5 + der.count)]).copyMemory(from: $0) }
            raw.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[(5 + der.count)...]).copyMemory(from: $0) }
        }
    }

    /// The server side of TLS: this certificate and key, TLS 1.2 at least.
    func tlsConfiguration() throws -> TLSConfiguration {
        let certificate = try NIOSSLCertificate(bytes: der, format: .der)
        let key = try NIOSSLPrivateKey(bytes: Array(privateKey.derRepresentation), format: .der)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    /// `server-tls.sealed` opened but does not hold a certificate and key.
    struct CredentialsDamaged: Error, CustomStringConvertible {
        var description: String { "the server certificate (server-tls.sealed) is damaged; remove it to make a new one, then pair the companion apps again" }
    }
}
