import EventLog
import Foundation
import VaultEvents

/// Copies a log's events, in order, into a new log: the re-key (`passwd --rekey`) and the upgrade
/// of a format-1 log both write their new log this way. Each data event goes under the key of its
/// category and month in the new log; frames whose keys were destroyed have nothing to copy, so
/// erased data does not travel into the new log at all.
enum LogRewrite {
    /// Appends every readable event of `source` to `transaction` of `target`.
    static func copy(from source: EventLog, into target: EventLog, transaction: inout LogTransaction) throws {
        // A data frame's label is its key's, and its events and definitions go over as they are:
        // each key has its own tables, kept in order. The audit key's frames (all of a format-1
        // log) are decoded: audit events go over as they are, data events are encoded again
        // under their label's key, with the definitions they need.
        var labels: [UInt32: [UInt8]] = [:]
        for key in source.dataKeys { labels[key.id] = key.label }
        var targetKeys: [[UInt8]: UInt32] = [:]
        func targetKey(for label: [UInt8]) throws -> UInt32 {
            if let id = targetKeys[label] { return id }
            let id = try target.keyID(forLabel: label)
            targetKeys[label] = id
            return id
        }
        var encoders: [UInt32: EventEncoder] = [:]
        let decoder = EventDecoder()
        var reader = try source.reader()
        while let frame = try reader.next() {
            // An erased frame has nothing to copy, and must not make its label a key again.
            if frame.isErased { continue }
            if frame.keyID != EventLog.auditKeyID {
                guard let label = labels[frame.keyID] else {
                    throw EventLogError.damaged(path: source.directory.log, offset: frame.offset, defect: .unknownKey(frame.keyID))
                }
                let keyID = try targetKey(for: label)
                try frame.forEachEvent { _, bytes in try target.append(bytes, keyID: keyID, to: &transaction) }
                continue
            }
            try frame.forEachEvent { index, bytes in
                guard let event = try decoder.decode(bytes, index: index) else { return }  // a format-1 definition
                guard let label = DataLabel.of(event) else {
                    try target.append(bytes, to: &transaction)
                    return
                }
                let keyID = try targetKey(for: label.bytes)
                let encoder = encoders[keyID] ?? EventEncoder()
                encoders[keyID] = encoder
                let (encoded, _) = encoder.encode(event)
                for definition in encoder.takeDefinitions() {
                    try definition.withUnsafeBytes { try target.append($0, keyID: keyID, to: &transaction) }
                }
                try encoded.withUnsafeBytes { try target.append($0, keyID: keyID, to: &transaction) }
            }
        }
    }
}
