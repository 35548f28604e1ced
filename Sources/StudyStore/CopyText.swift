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
    static func append(_ row: Int, _ fields: [StudyRowBatch.Field], of batch: StudyRowBatch, arena: UnsafeBufferPointer<UInt8>,
                       suffix: [UInt8] = [], to buffer: inout ByteBuffer) {
        let escape = batch.needsEscaping[row]
        for (i, field) in fields.enumerated() {
            if i > 0 { buffer.writeInteger(UInt8(0x09)) }
            guard let span = batch.span(row, field) else {
                buffer.writeStaticString("\\N")
                continue
            }
            let bytes = UnsafeBufferPointer(rebasing: arena[span])
            if escape {
                appendEscaped(bytes, to: &buffer)
            } else {
                buffer.writeBytes(UnsafeRawBufferPointer(bytes))
            }
        }
        buffer.writeBytes(suffix)
        buffer.writeInteger(UInt8(0x0A))
    }

    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to buffer: inout ByteBuffer) {
        for byte in bytes {
            switch byte {
            case 0x5C: buffer.writeStaticString("\\\\")
            case 0x09: buffer.writeStaticString("\\t")
            case 0x0A: buffer.writeStaticString("\\n")
            case 0x0D: buffer.writeStaticString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }
}
