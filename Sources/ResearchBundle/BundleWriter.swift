import BinaryCoding
import Envelope
import Storage
import Foundation
import SecureMemory

/// Writes the encrypted stream of a bundle.
public enum BundleWriter {
    /// Writes `entries` (`BundleFormat.entry` bytes, concatenated into one stream, then the
    /// `padding` entry) as a version-2 bundle file to `path` (created new, 0600, fsynced), with
    /// the stream key sealed to `recipientKey`; returns the BLAKE2b-256 of the file and its size.
    /// On failure nothing is left at `path`.
    public static func write(_ entries: [[UInt8]], recipientKey: [UInt8], to path: String,
                      fileSystem: any FileSystem) throws -> (String, Int) {
        let entries = entries + [BundleFormat.paddingEntry(after: entries.reduce(0) { $0 + $1.count })]
        let streamKey = SecretStream.generateKey()
        let encryptor = try SecretStream.Encryptor(key: streamKey)
        var header = ByteWriter(capacity: BundleFormat.headerBytes)
        header.write(BundleFormat.magic)
        header.write(BundleFormat.version)
        header.write(try BoxKeyPair.seal(streamKey, to: recipientKey))
        header.write(encryptor.header)

        let file: any StorageFile
        do {
            file = try fileSystem.open(path, mode: .createNew)
        } catch StorageError.alreadyExists {
            throw BundleError.fileExists(path: path)
        } catch {
            throw BundleError.cannotWrite(path: path, reason: "cannot be created: \(error)")
        }
        let digest = Digest()
        var total = 0
        do {
            func put(_ bytes: [UInt8]) throws {
                digest.update(bytes)
                try bytes.withUnsafeBytes { try file.write(at: UInt64(total), $0) }
                total += bytes.count
            }
            try put(header.bytes)
            // Entries are cut into chunks of `chunkSize` across entry boundaries.
            var pending: [UInt8] = []
            pending.reserveCapacity(BundleFormat.chunkSize * 2)
            func emit(final: Bool) throws {
                let cipher = pending.withUnsafeBytes { encryptor.push($0, final: final) }
                var length = ByteWriter(capacity: 4)
                length.write(UInt32(cipher.count))
                try put(length.bytes + cipher)
                pending.removeAll(keepingCapacity: true)
            }
            for entry in entries {
                var offset = 0
                while offset < entry.count {
                    let n = min(BundleFormat.chunkSize - pending.count, entry.count - offset)
                    pending += entry[offset..<offset + n]
                    offset += n
                    if pending.count == BundleFormat.chunkSize { try emit(final: false) }
                }
            }
            try emit(final: true)
            try file.fullSync()
        } catch {
            try? fileSystem.remove(path)
            throw BundleError.cannotWrite(path: path, reason: "could not be written: \(error)")
        }
        return (digest.finish().hex, total)
    }
}
