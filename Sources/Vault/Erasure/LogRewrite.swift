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
        // A data frame's label is its key's; audit-key frames (all of a format-1 log) are decoded.
        var labels: [UInt32: [UInt8]] = [:]
        for key in source.dataKeys { labels[key.id] = key.label }
        var targetKeys: [[UInt8]: UInt32] = [:]
        func targetKey(for label: [UInt8]) throws -> UInt32 {
            if let id = targetKeys[label] { return id }
            let id = try target.keyID(forLabel: label)
            targetKeys[label] = id
            return id
        }
        let decoder = EventDecoder()
        var reader = try source.reader()
        while let frame = try reader.next() {
            let frameLabel = frame.keyID == EventLog.auditKeyID ? nil : labels[frame.keyID]
            try frame.forEachEvent { index, bytes in
                var keyID = EventLog.auditKeyID
                if let frameLabel {
                    keyID = try targetKey(for: frameLabel)
                } else if let event = try decoder.decode(bytes, index: index), let label = DataLabel.of(event) {
                    keyID = try targetKey(for: label.bytes)
                }
                try target.append(bytes, keyID: keyID, to: &transaction)
            }
        }
    }
}
