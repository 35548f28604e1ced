import Foundation
import SecureMemory

/// What `bundle open` found and wrote.
public struct OpenedBundle: Sendable {
    public var senderFingerprint: String
    public var recipient: String
    public var createdAt: String
    /// Files written under the output directory, `manifest.json` first.
    public var files: [String]
    public var counts: [String: Int]
}

/// The researcher's side: checks a bundle whole (key, every chunk and the final one, the
/// signature, the sender, every file's hash) and only then gives its files their place.
///
/// It streams (`BundleStream`), in memory bounded by one chunk (1 MiB) and the manifest whatever
/// the bundle's size: the signed manifest comes first and is checked before any data; each data
/// file is written into a staging folder beside DIR (0700, files 0600) as it is decrypted, and
/// hashed on the way; only when the last chunk, every file's size and hash and the padding have
/// checked out is the folder renamed to DIR. A refused bundle leaves nothing: the folder is removed.
public enum BundleReader {
    /// The largest manifest read (a year of consents and files is a few KiB).
    static let maximumManifest = 16 << 20

    public static func open(_ path: String, keyFile: String, outputDirectory requested: String, expectSender: String? = nil) throws -> OpenedBundle {
        // `out/` and `out` are one directory; the staging directory goes beside it, not inside.
        let outputDirectory = URL(fileURLWithPath: requested).standardizedFileURL.path
        if FileManager.default.fileExists(atPath: outputDirectory),
           !((try? FileManager.default.contentsOfDirectory(atPath: outputDirectory))?.isEmpty ?? false) {
            throw BundleError.fileExists(path: outputDirectory)
        }
        let stream = try BundleStream(path: path, keyFile: keyFile, expectSender: expectSender)

        removeStaleStaging(of: outputDirectory)
        let staging = outputDirectory + ".tmp." + RandomBytes.make(8).hex
        var stagingMade = false
        func makeStaging() throws {
            guard !stagingMade else { return }
            do {
                try FileManager.default.createDirectory(atPath: staging + "/data", withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw BundleError.cannotWrite(path: staging, reason: "could not be created: \(error.localizedDescription)")
            }
            stagingMade = true
        }
        var manifest: BundleManifestInfo?
        var output: NewFile?
        do {
            while let part = try stream.next() {
                switch part {
                case .manifest(let checked): manifest = checked
                case .fileBegin(let file):
                    try makeStaging()
                    output = try NewFile(creating: staging + "/" + file.path)
                case .bytes(let bytes): try output?.write(bytes)
                case .fileEnd: output = nil
                }
            }
            guard let manifest else { throw BundleError.refused(path: path, reason: "malformed contents (no signed manifest)") }
            try makeStaging()
            try NewFile.write(manifest.bytes, to: staging + "/" + BundleFormat.manifestName, sync: false)
            // Everything checked: the staging folder takes DIR's place. rename(2) takes the place
            // of an empty directory atomically and refuses a non-empty one (something written
            // there meanwhile is never deleted).
            guard rename(staging, outputDirectory) == 0 else {
                throw errno == ENOTEMPTY || errno == EEXIST ? BundleError.fileExists(path: requested) : CocoaError(.fileWriteUnknown)
            }
        } catch {
            output = nil
            if stagingMade { try? FileManager.default.removeItem(atPath: staging) }
            if error is BundleError { throw error }
            throw BundleError.cannotWrite(path: outputDirectory, reason: "could not be written: \(error.localizedDescription)")
        }
        let checked = manifest!
        return OpenedBundle(senderFingerprint: checked.senderFingerprint, recipient: checked.recipient, createdAt: checked.createdAt,
                            files: [BundleFormat.manifestName] + checked.files.map(\.path), counts: checked.counts)
    }

    /// Removes what an open killed part-way left beside `outputDirectory` (`DIR.tmp.<16 hex>`
    /// folders holding decrypted files), so plaintext does not linger past the next open.
    private static func removeStaleStaging(of outputDirectory: String) {
        let parent = (outputDirectory as NSString).deletingLastPathComponent
        let prefix = (outputDirectory as NSString).lastPathComponent + ".tmp."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent.isEmpty ? "." : parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            let suffix = name.dropFirst(prefix.count)
            guard suffix.count == 16, suffix.allSatisfy(\.isHexDigit) else { continue }
            try? FileManager.default.removeItem(atPath: (parent.isEmpty ? "." : parent) + "/" + name)
        }
    }

    static func isSafe(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count == 2, parts[0] == "data" else { return false }
        let name = parts[1]
        return (name.hasSuffix(".ndjson") || name.hasSuffix(".csv")) && name.allSatisfy { $0.isLetter || $0 == "." || $0 == "-" }
    }
}
