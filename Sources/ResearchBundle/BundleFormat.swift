import BinaryCoding
import Envelope
import Foundation

/// The bundle file layout (docs/bundle-format.md). Version 2, written today:
///
/// ```
/// magic "HVBUNDL\n" (8) || version u16 || sealed stream key (80) || secretstream header (24)
/// || chunks: ciphertext length u32 || ciphertext
/// ```
/// The stream's plaintext is a sequence of entries (`name length u16 || name || length u64 ||
/// bytes`): `manifest.json` (which names the sender's keys), `manifest.sig` (Ed25519 over the
/// manifest), the data files, then `padding` (zero bytes) up to a Padmé bucket, so that nothing
/// outside the encryption names the sender or gives the exact size.
///
/// Version 1 (still opened) had the sender's signing key between the version and the sealed key,
/// in the clear, and no padding.
public enum BundleFormat {
    static let magic: [UInt8] = Array("HVBUNDL\n".utf8)
    /// The version written.
    static let version: UInt16 = 2
    static let sealedKeyBytes = SecretStream.keyBytes + BoxKeyPair.sealOverhead
    /// Header bytes of a version-2 bundle.
    static let headerBytes = headerBytes(version: version)
    /// Header bytes of a bundle of `version` (1 or 2).
    static func headerBytes(version: UInt16) -> Int {
        8 + 2 + (version == 1 ? SigningKeyPair.publicKeyBytes : 0) + sealedKeyBytes + SecretStream.headerBytes
    }
    /// Plaintext per chunk.
    static let chunkSize = 1 << 20
    static let manifestName = "manifest.json"
    static let signatureName = "manifest.sig"
    static let paddingName = "padding"

    /// The length `length` is padded to: Padmé (Nikitin et al., "Reducing Metadata Leakage from
    /// Encrypted Files and Communication with PURBs", 2019). At most 12 % more, and a length
    /// reveals O(log log) bits of the true size instead of all of them.
    public static func padme(_ length: Int) -> Int {
        guard length > 2 else { return length }
        let e = Int.bitWidth - 1 - length.leadingZeroBitCount
        let s = Int.bitWidth - 1 - e.leadingZeroBitCount + 1
        let mask = (1 << (e - s)) - 1
        return (length + mask) & ~mask
    }

    /// The `padding` entry that brings a plaintext of `length` bytes to its Padmé bucket.
    static func paddingEntry(after length: Int) -> [UInt8] {
        let overhead = 2 + paddingName.utf8.count + 8
        return entry(name: paddingName, bytes: [UInt8](repeating: 0, count: padme(length + overhead) - length - overhead))
    }

    /// One entry of a bundle's plaintext.
    public static func entry(name: String, bytes: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 2 + name.utf8.count + 8)
        w.write(UInt16(name.utf8.count))
        w.write(Array(name.utf8))
        w.write(UInt64(bytes.count))
        return w.bytes + bytes
    }

    /// A bundle's plaintext split into its entries, or nil unless it is whole entries only.
    public static func entries(_ plaintext: [UInt8]) -> [(name: String, bytes: ArraySlice<UInt8>)]? {
        // The reader's own splitter, fed the whole plaintext at once: each entry's bytes arrive as
        // one slice of it.
        var stream = BundleEntryStream()
        var entries: [(name: String, bytes: ArraySlice<UInt8>)] = []
        var body: ArraySlice<UInt8> = []
        stream.feed(plaintext[...]) { event in
            switch event {
            case .begin(let name, _): entries.append((name, []))
            case .bytes(let bytes): body = bytes
            case .end:
                entries[entries.count - 1].bytes = body
                body = []
            }
        }
        return stream.isAtEntryBoundary ? entries : nil
    }
}

/// The signed manifest (JSON, keys sorted). Field names are part of the format.
struct BundleManifest: Codable, Equatable {
    struct Party: Codable, Equatable {
        var fingerprint: String?
        var name: String?
        var signingKey: String?
        var encryptionKey: String?
        var publicKey: String?
    }

    /// Where in the log the export read. Version 2 keeps only the chain hash: the sequence and
    /// event count told a recipient how much the whole vault holds.
    struct Position: Codable, Equatable {
        var sequence: UInt64?
        var events: UInt64?
        var chainHash: String
    }

    struct File: Codable, Equatable {
        var path: String
        var category: String
        var granularity: String
        var format: String
        var lines: Int
        var bytes: Int
        var blake2b: String
    }

    var format = "healthvault-bundle"
    /// The bundle format version the manifest was written for (1 or 2).
    var version = Int(BundleFormat.version)
    var createdAt: String
    var sender: Party
    var recipient: Party
    var logPosition: Position
    var consents: [ConsentReceipt]
    var files: [File]
    var counts: [String: Int]
    /// `export --since-last`: the hash of the bundle to the same recipient this one follows
    /// (absent in full exports and in bundles made before 2026-11-25).
    var follows: String?
}

/// A consent as a FHIR R4 `Consent` resource (the subset a research system reads).
public struct ConsentReceipt: Codable, Equatable, Sendable {
    struct Coding: Codable, Equatable { var system: String?; var code: String }
    struct Concept: Codable, Equatable { var coding: [Coding]?; var text: String? }
    struct Period: Codable, Equatable { var start: String?; var end: String? }
    struct Reference: Codable, Equatable { var display: String }
    struct Actor: Codable, Equatable { var role: Concept; var reference: Reference }
    struct Provision: Codable, Equatable {
        var type = "permit"
        var period: Period
        var actor: [Actor]
        var purpose: [Coding]?
        var `class`: [Coding]
        var dataPeriod: Period
    }
    struct Extension: Codable, Equatable { var url: String; var valueCode: String }

    var resourceType = "Consent"
    var id: String
    var status = "active"
    var scope: Concept
    var category: [Concept]
    var dateTime: String
    var provision: Provision
    var `extension`: [Extension]

    /// The receipt of consent `id`, given `at` to `recipient` for `categories` (their names), at
    /// `granularity`, for data from `from` to `to` (local days, inclusive), until `expires`.
    public init(id: String, at: Date, recipient: String, categories: [String], granularity: String,
         from: String?, to: String?, expires: String?, purpose: String?) {
        let iso = ISO8601DateFormatter()
        self.id = id
        scope = Concept(coding: [Coding(system: "http://terminology.hl7.org/CodeSystem/consentscope", code: "research")], text: nil)
        category = [Concept(coding: [Coding(system: "http://loinc.org", code: "57016-8")], text: "Privacy policy acknowledgment")]
        dateTime = iso.string(from: at)
        provision = Provision(
            period: Period(start: iso.string(from: at), end: expires),
            actor: [Actor(role: Concept(coding: [Coding(system: "http://terminology.hl7.org/CodeSystem/v3-ParticipationType", code: "IRCP")], text: nil),
                          reference: Reference(display: recipient))],
            purpose: purpose.map { [Coding(system: nil, code: $0)] },
            class: categories.map { Coding(system: "urn:healthvault:category", code: $0) },
            dataPeriod: Period(start: from, end: to))
        `extension` = [Extension(url: "urn:healthvault:granularity", valueCode: granularity)]
    }

    /// The consent's id in the sender's vault.
    public var consentID: String { id }
    /// The categories it covers (`activity`, ...).
    public var categories: [String] { provision.class.map(\.code) }
    /// `raw`, `hourly` or `daily`.
    public var granularity: String? { `extension`.first { $0.url == "urn:healthvault:granularity" }?.valueCode }
    /// The first and last local day of the data it covers (`YYYY-MM-DD`), nil when open.
    public var dataFrom: String? { provision.dataPeriod.start }
    public var dataTo: String? { provision.dataPeriod.end }
}

extension BundleManifest {
    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return Array(try encoder.encode(self))
    }
}
