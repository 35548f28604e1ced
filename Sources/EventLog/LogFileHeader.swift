import BinaryCoding

/// The 32 bytes at the start of the log file: magic, format version and vault id.
struct LogFileHeader {
    var version: UInt16 = LogFormat.version
    var vaultID: [UInt8]

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: LogFormat.fileHeaderSize)
        writer.write(LogFormat.fileMagic)
        writer.write(version)
        writer.write(UInt16(0))
        writer.write(vaultID)
        let crc = writer.bytes.withUnsafeBytes { CRC32C.checksum($0) }
        writer.write(crc)
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8], path: String) throws -> LogFileHeader {
        guard bytes.count >= LogFormat.fileHeaderSize, bytes.prefix(8).elementsEqual(LogFormat.fileMagic) else {
            throw EventLogError.notALog(path: path)
        }
        return try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            _ = reader.readBytes(8)
            let version: UInt16 = reader.read()!
            _ = reader.read(UInt16.self)
            let vaultID = reader.readBytes(LogFormat.vaultIDSize)!
            let crc: UInt32 = reader.read()!
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw.prefix(28))) == crc else {
                throw EventLogError.damaged(path: path, offset: 0, defect: .headerChecksumMismatch)
            }
            guard LogFormat.readableVersions.contains(version) else {
                throw EventLogError.unsupportedFormat(path: path, version: version)
            }
            return LogFileHeader(version: version, vaultID: vaultID)
        }
    }
}
