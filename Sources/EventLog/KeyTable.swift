import BinaryCoding
import SecureMemory

/// The log's data keys beyond the audit key: one random key per label (the vault's labels name a
/// category and a month), kept in `keys.sealed` under a key derived from the master key.
///
/// A data key is never derived from the master key: destroying its entry (a tombstone, which
/// keeps the label, the time and the erasure's id but not the key) makes every frame sealed
/// under it unreadable for good, whoever later learns the passphrase. The chain still verifies,
/// because it hashes ciphertext.
///
/// Layout (docs/log-format.md, "Key table"): magic `"HVKEYS\r\n"`(8) version(2) reserved(2)
/// vaultID(16) nonce(24) plaintextLength(4), then the XChaCha20-Poly1305 ciphertext of the entries
/// with its tag; every header byte is associated data. The plaintext is `nextID`(4) `count`(4)
/// and per entry: id(4) state(1: live, 2: erased) labelLength(2) label, then for a live entry
/// its key(32), for an erased one erasedAt(8, ms since 1970) eraseID(8) recorded(1: whether the
/// erasure's audit event is committed to the log) events(8: the data events the key sealed,
/// counted before it was destroyed).
package struct KeyTable {
    static let magic: [UInt8] = Array("HVKEYS\r\n".utf8)
    static let version: UInt16 = 1
    static let headerSize = 8 + 2 + 2 + 16 + 24 + 4
    static let keyContext: StaticString = "hvkeytab"
    /// Larger files are refused before anything is allocated (a million entries fit).
    static let maximumSize = 64 << 20
    /// Ids below this are derived keys (1 is the audit key); table ids start here.
    static let firstID: UInt32 = 2

    enum State {
        case live(SecretKey)
        case erased(Tombstone)
    }

    /// What is left of a destroyed key.
    struct Tombstone: Equatable {
        /// Milliseconds since 1970.
        var at: Int64
        var eraseID: [UInt8]
        /// Whether the erasure's audit event is committed to the log.
        var recorded: Bool
        /// Data events the key sealed (definitions aside).
        var events: UInt64
    }

    struct Entry {
        var id: UInt32
        var label: [UInt8]
        var state: State

        var key: SecretKey? {
            if case .live(let key) = state { return key }
            return nil
        }
    }

    private(set) var entries: [Entry] = []
    private(set) var nextID: UInt32 = firstID
    /// Index in `entries` of each label's live key.
    private var liveByLabel: [[UInt8]: Int] = [:]

    init() {}

    /// The live key for `label`, if there is one.
    func liveEntry(for label: [UInt8]) -> Entry? {
        liveByLabel[label].map { entries[$0] }
    }

    /// Adds a fresh random key for `label` and returns its id.
    mutating func addKey(for label: [UInt8]) -> UInt32 {
        let id = nextID
        nextID += 1
        liveByLabel[label] = entries.count
        entries.append(Entry(id: id, label: label, state: .live(SecretKey.random())))
        return id
    }

    /// Adds the tombstone of a key destroyed in another table (a re-key's new log keeps them, so
    /// erased months stay refused); returns its id.
    mutating func addTombstone(for label: [UInt8], at milliseconds: Int64, eraseID: [UInt8]) -> UInt32 {
        let id = nextID
        nextID += 1
        entries.append(Entry(id: id, label: label, state: .erased(Tombstone(at: milliseconds, eraseID: eraseID, recorded: true, events: 0))))
        return id
    }

    /// Destroys the keys of `ids`: their entries become tombstones.
    mutating func erase(ids: Set<UInt32>, at milliseconds: Int64, eraseID: [UInt8], events: [UInt32: UInt64]) {
        for index in entries.indices where ids.contains(entries[index].id) {
            if entries[index].key != nil { liveByLabel[entries[index].label] = nil }
            entries[index].state = .erased(Tombstone(at: milliseconds, eraseID: eraseID, recorded: false, events: events[entries[index].id] ?? 0))
        }
    }

    /// Marks the tombstones of erasure `eraseID` as recorded in the log.
    mutating func markRecorded(eraseID: [UInt8]) {
        for index in entries.indices {
            if case .erased(var tombstone) = entries[index].state, !tombstone.recorded, tombstone.eraseID == eraseID {
                tombstone.recorded = true
                entries[index].state = .erased(tombstone)
            }
        }
    }

    /// Erasures whose tombstones are not yet recorded in the log (a crash between the two).
    var unrecordedErasures: [[UInt8]] {
        var seen: [[UInt8]] = []
        for entry in entries {
            if case .erased(let tombstone) = entry.state, !tombstone.recorded, !seen.contains(tombstone.eraseID) { seen.append(tombstone.eraseID) }
        }
        return seen
    }

    // MARK: File

    /// Seals the table for `vaultID` under the table key.
    func sealed(vaultID: [UInt8], tableKey: SecretKey) -> [UInt8] {
        let plaintext = SecureBytes(count: plaintextSize) { out in write(into: out) }
        return plaintext.withUnsafeBytes { Self.seal($0, vaultID: vaultID, tableKey: tableKey) }
    }

    /// The file holding `plaintext` (entries as `write` lays them out) for `vaultID`.
    private static func seal(_ plaintext: UnsafeRawBufferPointer, vaultID: [UInt8], tableKey: SecretKey) -> [UInt8] {
        let nonce = Sodium.randomBytes(LogFormat.nonceSize)
        var header = ByteWriter(capacity: headerSize)
        header.write(magic)
        header.write(version)
        header.write(UInt16(0))
        header.write(vaultID)
        header.write(nonce)
        header.write(UInt32(plaintext.count))
        var file = header.bytes + [UInt8](repeating: 0, count: plaintext.count + LogFormat.tagSize)
        file.withUnsafeMutableBytes { out in
            nonce.withUnsafeBytes { n in
                FrameCipher.seal(plaintext, header: UnsafeRawBufferPointer(rebasing: out.prefix(headerSize)), nonce: n, key: tableKey,
                                 into: UnsafeMutableRawBufferPointer(rebasing: out[headerSize...]))
            }
        }
        return file
    }

    /// Opens a sealed table; the error names `path` and what is wrong.
    static func open(_ bytes: [UInt8], vaultID: [UInt8], tableKey: SecretKey, path: String) throws -> KeyTable {
        func damaged(_ reason: String) -> EventLogError { .keyTableInvalid(path: path, reason: reason) }
        guard bytes.count >= headerSize + LogFormat.tagSize else { throw damaged("truncated") }
        guard Array(bytes.prefix(8)) == magic else { throw damaged("not a key table") }
        let header = bytes.withUnsafeBytes { KeyTableHeader($0) }
        guard header.version == version else { throw damaged("format version \(header.version) is not supported by this build") }
        guard header.vaultID == vaultID else { throw damaged("belongs to another vault") }
        guard Int(header.length) + headerSize + LogFormat.tagSize == bytes.count else { throw damaged("truncated") }
        var table: KeyTable?
        var malformed = false
        try bytes.withUnsafeBytes { raw in
            let plaintext = try SecureBytes(count: Int(header.length)) { out in
                let ok = header.nonce.withUnsafeBytes { n in
                    FrameCipher.open(UnsafeRawBufferPointer(rebasing: raw[headerSize...]), header: UnsafeRawBufferPointer(rebasing: raw.prefix(headerSize)),
                                     nonce: n, key: tableKey, into: out)
                }
                guard ok else { throw damaged("fails authentication") }
            }
            plaintext.withUnsafeBytes { plain in
                table = KeyTable(parsing: plain)
                malformed = table == nil
            }
        }
        guard !malformed, let table else { throw damaged("malformed entries") }
        return table
    }

    // MARK: For the fuzz harness

    /// Seals `plaintext` as a key table of `vaultID` under `masterKey`'s table key, without
    /// parsing it: the fuzz harness's way past the authentication to the entry parser.
    package static func sealForFuzzing(plaintext: [UInt8], vaultID: [UInt8], masterKey: SecretKey) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, vaultID: vaultID, tableKey: LogKeyring(masterKey: masterKey).tableKey) }
    }

    /// Parses a key table file of `vaultID` as opening a log does; throws what opening would.
    package static func parseForFuzzing(_ file: [UInt8], vaultID: [UInt8], masterKey: SecretKey) throws {
        _ = try open(file, vaultID: vaultID, tableKey: LogKeyring(masterKey: masterKey).tableKey, path: "keys.sealed")
    }

    /// The plaintext of a sealed table (keys included, in ordinary memory: for the fuzz
    /// harness's seeds only).
    package static func plaintextForFuzzing(_ file: [UInt8], vaultID: [UInt8], masterKey: SecretKey) throws -> [UInt8] {
        let table = try open(file, vaultID: vaultID, tableKey: LogKeyring(masterKey: masterKey).tableKey, path: "keys.sealed")
        let plaintext = SecureBytes(count: table.plaintextSize) { table.write(into: $0) }
        return plaintext.withUnsafeBytes { Array($0) }
    }

    private var plaintextSize: Int {
        entries.reduce(8) { size, entry in
            size + 4 + 1 + 2 + entry.label.count + (entry.key != nil ? SecretKey.byteCount : 25)
        }
    }

    private func write(into out: UnsafeMutableRawBufferPointer) {
        var offset = 0
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { out.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            offset += MemoryLayout<T>.size
        }
        func put(_ bytes: UnsafeRawBufferPointer) {
            if bytes.count > 0 { out.baseAddress!.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            offset += bytes.count
        }
        put(nextID)
        put(UInt32(entries.count))
        for entry in entries {
            put(entry.id)
            switch entry.state {
            case .live(let key):
                put(UInt8(1))
                put(UInt16(entry.label.count))
                entry.label.withUnsafeBytes { put($0) }
                key.withUnsafeBytes { put($0) }
            case .erased(let tombstone):
                put(UInt8(2))
                put(UInt16(entry.label.count))
                entry.label.withUnsafeBytes { put($0) }
                put(tombstone.at)
                tombstone.eraseID.withUnsafeBytes { put($0) }
                put(UInt8(tombstone.recorded ? 1 : 0))
                put(tombstone.events)
            }
        }
        precondition(offset == out.count, "key table size computed wrongly")
    }

    /// Parses the plaintext; nil unless it is exactly a well-formed table.
    private init?(parsing plain: UnsafeRawBufferPointer) {
        var reader = ByteReader(plain)
        guard let next: UInt32 = reader.read(), let count: UInt32 = reader.read(), next >= Self.firstID,
              UInt64(count) <= UInt64(plain.count / 7) else { return nil }
        nextID = next
        // Every live key's bytes go into one secure arena: found in a first pass over the entries.
        var keyOffsets: [Int] = []
        do {
            var scan = ByteReader(plain)
            scan.skip(8)
            for _ in 0..<count {
                guard let _: UInt32 = scan.read(), let state: UInt8 = scan.read(), let labelLength: UInt16 = scan.read(),
                      scan.readBytes(Int(labelLength)) != nil else { return nil }
                if state == 1 {
                    guard scan.remaining >= SecretKey.byteCount else { return nil }
                    keyOffsets.append(scan.offset)
                    scan.skip(SecretKey.byteCount)
                } else {
                    guard scan.remaining >= 25 else { return nil }
                    scan.skip(25)
                }
            }
        }
        let arena = SecureBytes(count: keyOffsets.count * SecretKey.byteCount) { out in
            for (i, offset) in keyOffsets.enumerated() {
                out.baseAddress!.advanced(by: i * SecretKey.byteCount).copyMemory(from: plain.baseAddress!.advanced(by: offset), byteCount: SecretKey.byteCount)
            }
        }
        var arenaKeys = SecretKey.keys(in: arena)[...]
        var seen = Set<UInt32>()
        for _ in 0..<count {
            guard let id: UInt32 = reader.read(), id >= Self.firstID, id < next, seen.insert(id).inserted,
                  let state: UInt8 = reader.read(), let labelLength: UInt16 = reader.read(),
                  let label = reader.readBytes(Int(labelLength)) else { return nil }
            switch state {
            case 1:
                guard reader.remaining >= SecretKey.byteCount, liveByLabel[label] == nil else { return nil }
                guard let key = arenaKeys.popFirst() else { return nil }
                reader.skip(SecretKey.byteCount)
                liveByLabel[label] = entries.count
                entries.append(Entry(id: id, label: label, state: .live(key)))
            case 2:
                guard let at: Int64 = reader.read(), let eraseID = reader.readBytes(8), let recorded: UInt8 = reader.read(),
                      recorded <= 1, let events: UInt64 = reader.read() else { return nil }
                entries.append(Entry(id: id, label: label, state: .erased(Tombstone(at: at, eraseID: eraseID, recorded: recorded == 1, events: events))))
            default:
                return nil
            }
        }
        guard reader.remaining == 0 else { return nil }
    }
}

/// The fixed fields of a key table's header, read without copying the rest.
private struct KeyTableHeader {
    var version: UInt16
    var vaultID: [UInt8]
    var nonce: [UInt8]
    var length: UInt32

    init(_ raw: UnsafeRawBufferPointer) {
        var reader = ByteReader(raw)
        _ = reader.readBytes(8)
        version = reader.read()!
        _ = reader.read(UInt16.self)
        vaultID = reader.readBytes(LogFormat.vaultIDSize)!
        nonce = reader.readBytes(LogFormat.nonceSize)!
        length = reader.read()!
    }
}
