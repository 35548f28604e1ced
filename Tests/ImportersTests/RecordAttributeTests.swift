@testable import Importers
import Testing

/// A record's usual attributes are found by name once per tag (`Tag.init`): each name is
/// recognized, nothing else is, and a tag answers with the first attribute of each name.
@Suite struct RecordAttributeTests {
    private let names: [(String, RecordAttribute)] = [
        ("type", .type), ("sourceName", .sourceName), ("source", .source), ("sourceVersion", .sourceVersion),
        ("device", .device), ("unit", .unit), ("value", .value), ("creationDate", .creationDate),
        ("startDate", .startDate), ("endDate", .endDate),
    ]

    @Test func everyNameIsRecognizedAndNothingElse() {
        #expect(names.map(\.1) == RecordAttribute.allCases)
        for (name, attribute) in names {
            #expect(Array(name.utf8).withUnsafeBytes { RecordAttribute.named($0) } == attribute)
        }
        let others = ["", "typ", "types", "Type", "unix", "values", "sourceVersio", "sourceVersionX", "startdate",
                      "endDatf", "creationDatE", "key", "bpm", "HKWasUserEntered", "sessionId", "dateComponents"]
        for other in others {
            #expect(Array(other.utf8).withUnsafeBytes { RecordAttribute.named($0) } == nil, "\(other)")
        }
    }

    @Test func aTagAnswersWithTheFirstAttributeOfEachNameAndKnowsOfOthers() {
        let text = #"type="a" HKWasUserEntered="1" unit="b" type="c" value="d""#
        let bytes = Array(text.utf8)
        // Name and value ranges as the tokenizer reports them.
        var attributes: [XMLAttribute] = []
        var i = 0
        while i < bytes.count {
            let nameStart = i
            while bytes[i] != 0x3D { i += 1 }
            let name = nameStart..<i
            let valueStart = i + 2
            var end = valueStart
            while bytes[end] != 0x22 { end += 1 }
            attributes.append(XMLAttribute(name: name, value: valueStart..<end, needsDecoding: false))
            i = end + 2
        }
        bytes.withUnsafeBytes { raw in
            let tag = Tag(bytes: raw, attributes: attributes)
            #expect(tag.value(.type).map { Array($0) } == Array("a".utf8))
            #expect(tag.value(.unit).map { Array($0) } == Array("b".utf8))
            #expect(tag.value(.value).map { Array($0) } == Array("d".utf8))
            #expect(tag[.device] == nil)
            #expect(tag.hasOtherAttributes)
            let plain = Tag(bytes: raw, attributes: [attributes[0], attributes[2]])
            #expect(!plain.hasOtherAttributes)
        }
    }
}
