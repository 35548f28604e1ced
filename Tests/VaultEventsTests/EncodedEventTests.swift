import Foundation
import HealthModel
import Testing
import VaultEvents

/// The view the vault reads stored bytes through, and the bytes themselves written out by hand
/// from docs/event-encoding.md: what a vault holds today decodes in ten years only if these stay.
@Suite struct EncodedEventTests {
    @Test func theViewNamesEveryKindAndRole() throws {
        let encoder = EventEncoder()
        for event in EventRoundTripTests.events {
            let (bytes, _) = encoder.encode(event)
            bytes.withUnsafeBytes { raw in
                let view = EncodedEvent(raw)
                #expect(view.knownKind?.rawValue == UInt64(bytes[1]), "\(event.kind)")
                #expect(view.isAudit == event.isAudit, "\(event.kind)")
                #expect(!view.isDefinition)
            }
            for definition in encoder.takeDefinitions() {
                definition.withUnsafeBytes { raw in
                    let view = EncodedEvent(raw)
                    #expect(view.isDefinition && !view.isAudit)
                    #expect(view.knownKind == .defineString || view.knownKind == .defineSource)
                }
            }
        }
        // Another version, a kind this build does not know, a kind past one byte, too few bytes.
        for bytes: [UInt8] in [[2, 5], [1, 99], [1, 0x85, 0x01], [1], []] {
            bytes.withUnsafeBytes { raw in
                let view = EncodedEvent(raw)
                #expect(view.knownKind == nil && !view.isAudit && !view.isDefinition, "\(bytes)")
            }
        }
        // The version is the decoder's to check: the kind byte alone answers isKind.
        [UInt8]([2, 5]).withUnsafeBytes { #expect(EncodedEvent($0).isKind(.sample)) }
    }

    static func encode(_ event: VaultEvent) -> (bytes: [UInt8], definitions: [[UInt8]]) {
        let encoder = EventEncoder()
        let (bytes, _) = encoder.encode(event)
        return (bytes, encoder.takeDefinitions())
    }

    /// version 1, kind 2, the date as zigzag milliseconds: 1500 ms → 3000 → B8 17.
    @Test func aPassphraseChangeIsItsDateInMilliseconds() {
        #expect(Self.encode(.passphraseChanged(at: Date(timeIntervalSince1970: 1.5))).bytes == [1, 2, 0xB8, 0x17])
        #expect(Self.encode(.passphraseChanged(at: Date(timeIntervalSince1970: -0.001))).bytes == [1, 2, 0x01])
    }

    /// version, kind 13, date 0, "move", the decimal 500 (zigzag 1000 << 5 | scale 0 = 32000 →
    /// 80 FA 01), the first day 1970-01-02 (zigzag 1 = 2).
    @Test func aGoalIsRingValueAndFirstDay() {
        let goal = GoalSetting(at: Date(timeIntervalSince1970: 0), ring: .move, value: DecimalValue(mantissa: 500, scale: 0), from: LocalDay(dayNumber: 1))
        #expect(Self.encode(.goalSet(goal)).bytes == [1, 13, 0x00, 4] + Array("move".utf8) + [0x80, 0xFA, 0x01, 0x02])
        // 2.5 is the mantissa 25 at scale 1: zigzag 50 << 5 | 1 = 1601 → C1 0C.
        let decimal = GoalSetting(at: Date(timeIntervalSince1970: 0), ring: .stand, value: DecimalValue(mantissa: 25, scale: 1), from: LocalDay(dayNumber: -1))
        #expect(Self.encode(.goalSet(decimal)).bytes == [1, 13, 0x00, 5] + Array("stand".utf8) + [0xC1, 0x0C, 0x01])
    }

    /// A correlation of kind 11, which builds before 2026-11 wrote (this one writes kind 22):
    /// type, source, span and metadata, by the ids its definitions gave.
    @Test func aCorrelationOfTheOlderKindStillDecodes() throws {
        let type = Array("HKCorrelationTypeIdentifierBloodPressure".utf8)
        let log: [[UInt8]] = [
            [1, 3, UInt8(type.count)] + type, [1, 3, 5] + Array("Phone".utf8), [1, 4, 0, 2, 0, 0, 0, 0, 0, 0],
            [1, 3, 4] + Array("note".utf8), [1, 3, 2] + Array("hi".utf8),
            [1, 11, 1, 1, 0x78, 0x00, 0x78, 0x00, 1, 3, 4 << 1],
        ]
        let decoder = EventDecoder()
        let decoded = try log.enumerated().map { index, bytes in try bytes.withUnsafeBytes { try decoder.decode($0, index: UInt64(index)) } }
        #expect(decoded.dropLast().allSatisfy { $0 == nil })
        #expect(decoded.last == .correlation(Correlation(type: "HKCorrelationTypeIdentifierBloodPressure", source: HealthSource(name: "Phone"),
                                                         start: HealthTimestamp(seconds: 978_307_260, utcOffset: 0),
                                                         end: HealthTimestamp(seconds: 978_307_320, utcOffset: 0),
                                                         metadata: [MetadataEntry(key: "note", value: "hi")])))
    }

    /// A quantity sample after the strings and the source it names are defined: type, source and
    /// unit by id; the span 60 s after 2001-01-01 in UTC (zigzag 120), 60 s long; 38 (zigzag 76
    /// << 5 = 2432 → 80 13); extras bit 3 (the whole event is its identity).
    @Test func aSampleIsDefinitionsThenIds() {
        let first = HealthTimestamp(seconds: 978_307_260, utcOffset: 0)
        let sample = HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "Phone"), start: first,
                                  end: HealthTimestamp(seconds: 978_307_320, utcOffset: 0), value: .quantity(DecimalValue(mantissa: 38, scale: 0), unit: "count"))
        let (bytes, definitions) = Self.encode(.sample(sample))
        let type = Array("HKQuantityTypeIdentifierStepCount".utf8)
        #expect(definitions == [
            [1, 3, UInt8(type.count)] + type,
            [1, 3, 5] + Array("Phone".utf8),
            [1, 4, 0, 2, 0, 0, 0, 0, 0, 0],
            [1, 3, 5] + Array("count".utf8),
        ], "\(definitions)")
        #expect(bytes == [1, 5, 1, 1, 1, 0x78, 0x00, 0x78, 0x00, 0x80, 0x13, 3, 0x08], "\(bytes)")
    }
}

/// The samples' path (`encode(sample:into:)`: the fixed fields through a buffer on the stack)
/// writes what the event's encoding writes, at the widest each field can be.
@Suite struct SampleFieldsTests {
    @Test func theWidestSamplesEncodeAsTheirEventsDo() {
        let far = HealthTimestamp(seconds: Int64.max / 4, utcOffset: 50_460)  // minutes, not quarter hours
        let before = HealthTimestamp(seconds: Int64.min / 4, utcOffset: -50_460)
        let source = HealthSource(name: "watch", version: "1", device: HealthDevice(name: "w", manufacturer: "m", model: "x", hardware: "h", software: "s"))
        let samples = [
            HealthSample(type: "t", source: source, start: before, end: far,
                         value: .quantity(DecimalValue(mantissa: Int64.max >> 7, scale: 30), unit: "u"),
                         metadata: [MetadataEntry(key: "b", value: "2"), MetadataEntry(key: "a", value: "1")],
                         beats: [HeartbeatEntry(bpm: DecimalValue(double: 61.25), time: "10:41:29.63 PM")], creationDate: before),
            HealthSample(type: "t", source: source, start: far, end: far, value: .quantity(DecimalValue(double: .pi), unit: "u"), creationDate: far),
            HealthSample(type: "c", source: source, start: far, end: before, value: .category("v")),
            HealthSample(type: "n", source: HealthSource(name: "phone"), start: before, end: before, value: .none),
        ]
        let byEvent = EventEncoder(), bySample = EventEncoder()
        var buffer: [UInt8] = [9, 9, 9]  // reused: what it held is not kept
        var sizes: [Int] = []
        for sample in samples {
            let (expected, _) = byEvent.encode(.sample(sample))
            bySample.encode(sample: sample, into: &buffer)
            #expect(buffer == expected)
            #expect(bySample.takeDefinitions() == byEvent.takeDefinitions())
            sizes.append(buffer.count)
        }
        // The first's fixed fields alone take 53 bytes (four of its varints 9 or 10 bytes wide),
        // then its metadata and beat.
        #expect(sizes.first! > 53 + 2 * 4 + 14)
    }

    /// Primitives written through the stack buffer and appended to an array are the same bytes.
    @Test func aFieldBufferWritesWhatAnEventWriterWrites() {
        var direct = EventWriter(kind: .sample), buffered = EventWriter(kind: .sample)
        let values: [UInt64] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, UInt64.max]
        for value in values { direct.varint(value) }
        direct.decimal(DecimalValue(double: -0.1))
        direct.timestamp(HealthTimestamp(seconds: 1_700_000_000, utcOffset: 19_800))
        buffered.fields(upTo: values.count * 10 + 9 + 20) { fields in
            for value in values { fields.varint(value) }
            fields.decimal(DecimalValue(double: -0.1))
            fields.timestamp(HealthTimestamp(seconds: 1_700_000_000, utcOffset: 19_800))
        }
        #expect(buffered.bytes == direct.bytes)
        var varints = EventWriter(kind: .sample)
        for value in values { varints.varint(value) }
        #expect(varints.bytes.count == 2 + 1 + 1 + 1 + 2 + 2 + 3 + 10)
    }
}
