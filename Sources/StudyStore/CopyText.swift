import NIOCore

/// Rows of a `StudyRowBatch` as lines of COPY's text format: fields separated by tabs, `\N` for
/// null, a backslash before a backslash, tab, newline or carriage return.
enum CopyText {
    /// The staging table's columns (`StudySchema.stagingColumns`), in their order.
    static let stagingFields = StudyRowBatch.Field.allCases
    /// The fields a participant's first raw rows carry straight into `samples`
    /// (`StudySchema.directSampleColumns`); the fingerprint, occurrence and bundle follow.
    static let directFields: [StudyRowBatch.Field] = [.category, .name, .day, .start, .end, .utcOffset, .value, .valueText, .unit, .clipped, .fields, .lineHash]

    /// Appends row `row`'s `fields`, then `suffix` (which starts with a tab when not empty) and a newline.
    ///
    /// The row is written through one reservation of the buffer: a row's fields are one run of
    /// the arena, so twice that run (every byte escaped), three bytes a field (a tab and `\N`),
    /// the suffix and the newline bound it. Writing field by field cost a capacity check and an
    /// exclusivity check on the buffer's storage for every field (docs/benchmarks-history.md).
    static func append(_ row: Int, _ fields: [StudyRowBatch.Field], of batch: StudyRowBatch, arena: UnsafeBufferPointer<UInt8>,
                       suffix: [UInt8] = [], to buffer: inout ByteBuffer) {
        let escape = batch.needsEscaping[row]
        let run = batch.rowExtent(row)
        let bound = run.count * (escape ? 2 : 1) + fields.count * 3 + suffix.count + 1
        suffix.withUnsafeBufferPointer { suffix in
            _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { out in
                let base = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var at = 0
                for (i, field) in fields.enumerated() {
                    if i > 0 {
                        base[at] = 0x09
                        at += 1
                    }
                    guard let span = batch.span(row, field) else {
                        base[at] = 0x5C
                        base[at + 1] = 0x4E
                        at += 2
                        continue
                    }
                    let bytes = UnsafeBufferPointer(rebasing: arena[span])
                    if escape {
                        at = writeEscaped(bytes, to: base, at: at)
                    } else if !bytes.isEmpty {
                        (base + at).update(from: bytes.baseAddress!, count: bytes.count)
                        at += bytes.count
                    }
                }
                if !suffix.isEmpty {
                    (base + at).update(from: suffix.baseAddress!, count: suffix.count)
                    at += suffix.count
                }
                base[at] = 0x0A
                return at + 1
            }
        }
    }

    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to base: UnsafeMutablePointer<UInt8>, at start: Int) -> Int {
        var at = start
        for byte in bytes {
            let escaped: UInt8
            switch byte {
            case 0x5C: escaped = 0x5C
            case 0x09: escaped = 0x74 // t
            case 0x0A: escaped = 0x6E // n
            case 0x0D: escaped = 0x72 // r
            default:
                base[at] = byte
                at += 1
                continue
            }
            base[at] = 0x5C
            base[at + 1] = escaped
            at += 2
        }
        return at
    }
}
