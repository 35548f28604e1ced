import Foundation
import HealthModel
import ResearchBundle
import Testing

/// The one line type of a bundle's data files: what the writer writes, the reader reads back.
@Suite struct BundleLineTests {
    static func ndjson(_ lines: [BundleLine], figures: Bool = false) -> String {
        var writer = BundleLineWriter(format: .ndjson, figures: figures)
        for line in lines { writer.append(line) }
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func read(_ text: String) throws -> BundleLine {
        try Array(text.utf8).withUnsafeBufferPointer { try BundleLineReader().read($0) }
    }

    static let t0 = HealthTimestamp(seconds: 1_711_846_800, utcOffset: 7200)

    @Test func decimalsKeepTheirWrittenForm() {
        #expect(BundleLineWriter.decimalText(DecimalValue(mantissa: 1250, scale: 2)) == "12.50")
        #expect(BundleLineWriter.decimalText(DecimalValue(mantissa: -5, scale: 3)) == "-0.005")
        #expect(BundleLineWriter.decimalText(DecimalValue(mantissa: 42, scale: 0)) == "42")
        #expect(BundleLineWriter.decimalText(DecimalValue(double: 0.1)) == "0.1")
    }

    @Test func timesCarryTheirOwnOffset() throws {
        let cases: [(HealthTimestamp, String)] = [
            (HealthTimestamp(seconds: -1, utcOffset: -4 * 3600), "1969-12-31T19:59:59-04:00"),
            (Self.t0, "2024-03-31T03:00:00+02:00"),
            (HealthTimestamp(seconds: 0, utcOffset: 19_800), "1970-01-01T05:30:00+05:30"),
        ]
        for (t, text) in cases {
            let line = RecordLine(category: "heart", type: "x", start: t, end: t, value: .none, unit: nil)
            #expect(Self.ndjson([.record(line)]) == "{\"category\":\"heart\",\"type\":\"x\",\"start\":\"\(text)\",\"end\":\"\(text)\",\"value\":null,\"unit\":null}\n")
            #expect(try Self.read(String(Self.ndjson([.record(line)]).dropLast())) == .record(line))
        }
    }

    /// One line of each shape the export writes, read back equal and written again byte for byte.
    @Test func everyShapeReadsBackAsItWasWritten() throws {
        let lines: [BundleLine] = [
            .record(RecordLine(category: "activity", type: "HKQuantityTypeIdentifierStepCount", start: Self.t0,
                               end: HealthTimestamp(seconds: Self.t0.seconds + 600, utcOffset: 7200), value: .decimal(DecimalValue(mantissa: 1250, scale: 2)),
                               unit: "count", clipped: true,
                               fields: [.init("source", .text("iPhone")), .init("deviceClass", .text("phone")),
                                        .init("metadata", .object([MetadataEntry(key: "HKWasUserEntered", value: "1"),
                                                                   MetadataEntry(key: "b\"q", value: "ü\n")]))])),
            .record(RecordLine(category: "location", type: "route", start: Self.t0, end: Self.t0, value: .none, unit: nil,
                               fields: [.init("latitude", .number(48.137154)), .init("longitude", .number(-11.5)), .init("altitude", .number(519))])),
            .record(RecordLine(category: "profile", type: "HKCharacteristicTypeIdentifierBiologicalSex", start: nil, end: nil,
                               value: .text("HKBiologicalSexFemale"), unit: nil)),
            .record(RecordLine(category: "heart", type: "HKElectrocardiogram", start: Self.t0, end: Self.t0, value: .text("Sinus Rhythm"), unit: "µV",
                               fields: [.init("sampleRate", .number(512)), .init("fields", .object([MetadataEntry(key: "Lead", value: "Lead I")])),
                                        .init("voltages", .thousandths([-93456, -94100, 12000, 5, 0]))])),
            .record(RecordLine(category: "trackers", type: "NoAlc", start: Self.t0, end: Self.t0, value: .decimal(DecimalValue(mantissa: 65, scale: 1)),
                               unit: nil)),
            .figure(AggregateLine(category: "activity", metric: "HKQuantityTypeIdentifierStepCount", period: "2024-03-31", value: 8412, unit: "count",
                                  samples: 96)),
            .figure(AggregateLine(category: "heart", metric: "HKQuantityTypeIdentifierHeartRate", period: "2024-03-31T08", value: 71.25,
                                  unit: "count/min", min: 58, max: 112.5, samples: 40)),
            .figure(AggregateLine(category: "activity", metric: "ring:move", period: "2024-03-31", value: nil, unit: "kcal", samples: 0)),
        ]
        for line in lines {
            let written = Self.ndjson([line])
            let read = try Self.read(String(written.dropLast()))
            #expect(read == line)
            #expect(Self.ndjson([read]) == written)
            // Whatever the strings, each line is one JSON object a general parser reads.
            #expect(try JSONSerialization.jsonObject(with: Data(written.utf8)) is [String: Any])
        }
        #expect(try Self.read("{\"category\":\"body\",\"type\":\"t\",\"start\":null,\"end\":null,\"value\":12.50,\"unit\":\"kg\"}")
            == .record(RecordLine(category: "body", type: "t", start: nil, end: nil, value: .decimal(DecimalValue(mantissa: 1250, scale: 2)), unit: "kg")))
    }

    @Test func csvQuotesWhatASpreadsheetWouldMisread() {
        let odd = "quote\" backslash\\ newline\n tab\t control\u{01} é 🏃"
        var csv = BundleLineWriter(format: .csv, figures: false)
        csv.append(.record(RecordLine(category: "other", type: "=HYPERLINK(\"x\")", start: Self.t0, end: Self.t0, value: .text(odd), unit: nil)))
        let text = String(decoding: csv.bytes, as: UTF8.self)
        #expect(text == "category,type,start,end,value,unit,clipped\nother,\"'=HYPERLINK(\"\"x\"\")\",2024-03-31T03:00:00+02:00,2024-03-31T03:00:00+02:00,\"quote\"\" backslash\\ newline\n tab\t control\u{01} é 🏃\",,\n")
        var figures = BundleLineWriter(format: .csv, figures: true)
        figures.append(.figure(AggregateLine(category: "heart", metric: "m", period: "2024-03-31", value: 71.25, unit: "count/min", min: 58, max: 90,
                                             samples: 4)))
        #expect(String(decoding: figures.bytes, as: UTF8.self) == "category,metric,period,value,unit,min,max,samples\nheart,m,2024-03-31,71.25,count/min,58,90,4\n")
        #expect(figures.count == 1)
    }

    @Test func aLineThatIsNotABundleLineSaysWhy() {
        let cases: [(String, String)] = [
            ("[1]", "not a JSON object"),
            ("{\"type\":\"t\",\"start\":null,\"end\":null,\"value\":1,\"unit\":null}", "no category text"),
            ("{\"category\":\"c\",\"type\":\"t\",\"start\":\"yesterday\",\"end\":null,\"value\":1,\"unit\":null}", "start is not a time with its offset"),
            ("{\"category\":\"c\",\"metric\":\"m\",\"period\":\"2024-01-01\",\"value\":1,\"unit\":\"u\",\"samples\":1.5}", "no whole number of samples"),
            ("{\"category\":\"c\",\"type\":\"t\",\"start\":null,\"end\":null,\"value\":1,\"unit\":null,\"voltages\":[0.0001]}",
             "voltages holds a number finer than a thousandth"),
        ]
        for (text, reason) in cases {
            #expect(throws: BundleLineReader.Malformed(reason: reason)) { try Self.read(text) }
        }
    }
}
