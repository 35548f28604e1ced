import EventLog
import Foundation
@testable import HealthModel
@testable import Vault
import VaultTestSupport
import ZIPFoundation

/// The real exports from other projects' test suites (Tests/Fixtures/apple-health, with their
/// licence notes).
enum Fixtures {
    static let root: String = {
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/apple-health").path
    }()

    static func path(_ name: String) -> String { root + "/" + name }
}

/// A vault opened for writing in a fresh directory.
/// The committed fixture vaults (`Tests/Fixtures/<name>/vault`, made by older builds; passphrase
/// `fixture passphrase`), and the files beside them.
enum FixtureVaults {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// `Tests/Fixtures/<name>/<file>`.
    static func path(_ name: String, _ file: String) -> String { root.appendingPathComponent(name + "/" + file).path }

    /// A copy of fixture vault `name` in `dir` (a fixture is never written); returns its path.
    static func copy(_ name: String, in dir: TemporaryDirectory) throws -> String {
        let path = dir.path + "/" + name
        try FileManager.default.copyItem(atPath: Self.path(name, "vault"), toPath: path)
        return path
    }

    /// A copy of fixture vault `name` in `dir`, opened for writing.
    static func open(_ name: String, in dir: TemporaryDirectory) throws -> Vault {
        try Vault.open(at: try copy(name, in: dir), passphrase: passphrase("fixture passphrase"), mode: .readWrite)
    }
}

struct ImportTestVault {
    let dir: TemporaryDirectory
    let vault: Vault

    init() throws {
        dir = TemporaryDirectory("import")
        vault = try makeVault(at: dir.path + "/v", passphrase: "p")
    }

    /// The vault in `directory` opened again for writing (after a re-key, say).
    init(reopening directory: TemporaryDirectory, passphrase text: String) throws {
        dir = directory
        vault = try Vault.open(at: directory.path + "/v", passphrase: passphrase(text), mode: .readWrite)
    }

    var path: String { dir.path + "/v" }

    func write(_ name: String, _ text: String) -> String {
        let file = dir.path + "/" + name
        try! Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Builds a zip of (path, contents) entries.
    func zip(_ name: String, _ entries: [(String, String)]) throws -> String {
        let file = dir.path + "/" + name
        let archive = try Archive(url: URL(fileURLWithPath: file), accessMode: .create)
        for (path, text) in entries {
            let data = Data(text.utf8)
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return file
    }

    /// Data events in the vault, in order.
    func dataEvents() throws -> [VaultEvent] {
        try vault.allEvents().map(\.event).filter { !$0.isAudit }
    }

    func samples() throws -> [HealthSample] {
        try dataEvents().compactMap { if case .sample(let s) = $0 { s } else { nil } }
    }
}

/// A minimal export around some body elements.
func export(_ body: String, doctype: String = "") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    \(doctype)<HealthData locale="en_US">
     <ExportDate value="2024-06-01 08:10:05 +0200"/>
    \(body)
    </HealthData>
    """
}

func stepRecord(_ start: String, _ end: String, _ value: String, source: String = "iPhone", device: String = "model:iPhone") -> String {
    """
     <Record type="HKQuantityTypeIdentifierStepCount" sourceName="\(source)" sourceVersion="17.1" device="&lt;&lt;HKDevice: 0x2813&gt;, name:\(source), manufacturer:Apple Inc., \(device), hardware:iPhone14,2, software:17.1&gt;" unit="count" creationDate="\(end)" startDate="\(start)" endDate="\(end)" value="\(value)"/>
    """
}
