import EventLog
import SecureMemory
import VaultEvents

/// What keeps an erasure final against someone who puts older files back.
///
/// The head record names the key table in force, so an older `keys.sealed` put back alone is
/// refused by the log. Put back together with the head record of its time, the pair is
/// consistent, and the log accepts a head one commit behind it as a crash between the log's sync
/// and the head's rename. But `erase` replaces the key table, and the head naming the new one,
/// *before* it commits its `erased` audit event: a head and table from before an erasure followed
/// by the commit that records it is a state no crash produces. These checks refuse it.
extension Vault {
    /// Judges the one commit past the head record (`EventLog.UnheadedCommitCheck`): an `erased`
    /// event in it whose erasure the key table in force does not hold as tombstones says the head
    /// and the table were put back (the table of an erasure's time holds its tombstones from the
    /// moment it is in force, before the event is committed).
    static func judgeUnheadedCommit(_ auditFrames: [LogFrame], _ keys: [EventLog.DataKey]) -> String? {
        let decoder = EventDecoder()
        var erasures: [ErasureRecord] = []
        for frame in auditFrames {
            frame.forEachEvent { index, bytes in
                guard EncodedEvent(bytes).isKind(.erased),
                      case .erased(let record)? = try? decoder.decode(bytes, index: index) else { return }
                erasures.append(record)
            }
        }
        return erasureProblem(erasures, keys: keys)
    }

    /// Why `keys` cannot be the key table after `erasures` were recorded, or nil.
    static func erasureProblem(_ erasures: [ErasureRecord], keys: [EventLog.DataKey]) -> String? {
        let tombstones = Set(keys.compactMap { $0.eraseID?.hex })
        for erasure in erasures where !tombstones.contains(erasure.eraseID) {
            return "the log records erasure \(erasure.eraseID) of \(erasure.labels.count) category-month(s), whose keys the key table still holds"
        }
        return nil
    }
}
