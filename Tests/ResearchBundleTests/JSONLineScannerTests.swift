import ResearchBundle
import Testing

/// The bundle lines' scanner and number reader (`JSONLineScanner`, `JSONNumber`), which the
/// study load and `BundleLineReader` share.
@Suite struct JSONLineScannerTests {
    /// Numbers the scanner reads itself (the common short decimals) equal what Swift's own
    /// parser makes of them, and every other number is left to that parser.
    @Test func shortDecimalsParseExactly() {
        for text in ["0", "-0", "71", "409.22", "0.05", "-12.5", "123456789012345", "1234567890123456789", "0.1234567890123456789", "2.5e3", "1E-5", "98.60000000000001"] {
            let parsed = Array(text.utf8).withUnsafeBufferPointer { JSONNumber.value($0) }
            #expect(parsed?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
    }

    /// What JSON's grammar refuses, or a double cannot hold, is no number.
    @Test func notNumbersAreRefused() {
        for text in ["", "-", "01", "1.", ".5", "1e", "+1", "1e400", "0x10", "NaN"] {
            #expect(Array(text.utf8).withUnsafeBufferPointer { JSONNumber.value($0) } == nil, "\(text)")
        }
    }

    /// The line reader takes JSON's grammar and nothing looser: what a database would refuse or cut
    /// is refused with the bundle.
    @Test func theLineReaderIsStrict() throws {
        let scanner = JSONLineScanner()
        func scans(_ text: String) -> Bool {
            Array(text.utf8).withUnsafeBufferPointer { (try? scanner.scan($0)) != nil }
        }
        for good in [#"{"a":-0.5e3,"b":"x\u00e9","c":null,"d":[1,{"e":"]"}]}"#, #"{}"#, #"{"a":0}"#, #" { "a" : 1 } "#] {
            #expect(scans(good), "\(good)")
        }
        for bad in [#"{"a":+1}"#, #"{"a":.5}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":"\u0000"}"#, #"{"a":1}x"#, #"{"a":1e999}"#, #"["a"]"#,
                    #"{"a":1e-310}"#, #"{"a":tru}"#, #"{"a":"\ud800"}"#, "{\"a\":\"\u{1}\"}", #"{"a" 1}"#, #"{"a":1,}"#] {
            #expect(!scans(bad), "\(bad)")
        }
        // Past the eight-byte fast path: what stops it is found at every place in a word.
        for offset in [7, 8, 9, 15, 16, 17, 23] {
            let plain = String(repeating: "p", count: offset)
            #expect(!scans("{\"a\":\"\(plain)\u{1}tail\"}"), "control byte at \(offset)")
            #expect(!scans("{\"a\":\"\(plain)\u{7F}\u{1F}\"}"), "control byte at \(offset + 1)")
            #expect(Array("{\"a\":\"\(plain)".utf8 + [0xC3, 0x28] + Array("tail\"}".utf8)).withUnsafeBufferPointer { (try? scanner.scan($0)) == nil },
                    "invalid UTF-8 at \(offset)")
            let line = Array("{\"a\":\"\(plain)\",\"b\":\"\(plain)\\n\(plain)é\"}".utf8)
            try line.withUnsafeBufferPointer { bytes in
                try scanner.scan(bytes)
                let a = try #require(scanner.member("a", in: bytes))
                #expect(String(decoding: scanner.bytes(a.value, in: bytes), as: UTF8.self) == plain)
                let b = try #require(scanner.member("b", in: bytes))
                #expect(String(decoding: scanner.bytes(b.value, in: bytes), as: UTF8.self) == plain + "\n" + plain + "é")
            }
        }
        #expect(Array([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]).withUnsafeBufferPointer { (try? scanner.scan($0)) == nil },
                "invalid UTF-8 refused")
        // Inside a nested value too, even right after a backslash.
        #expect(Array(#"{"m":["\"#.utf8 + [0xFF] + #""]}"#.utf8).withUnsafeBufferPointer { (try? scanner.scan($0)) == nil },
                "invalid UTF-8 in a nested string refused")
        // A backslash outside a nested value's strings still makes the line one COPY escapes.
        try Array(#"{"m":{"a":1,\n"b":2}}"#.utf8).withUnsafeBufferPointer { bytes in
            try scanner.scan(bytes)
            #expect(scanner.hasSpecialBytes)
        }
        try Array(#"{"m":{"a":"x"}}"#.utf8).withUnsafeBufferPointer { bytes in
            try scanner.scan(bytes)
            #expect(!scanner.hasSpecialBytes)
        }
        let line = Array(#"{"a":-0.5e3,"d":[1,{"e":"]"}],"s":"tab\there"}"#.utf8)
        try line.withUnsafeBufferPointer { bytes in
            try scanner.scan(bytes)
            let a = try #require(scanner.member("a", in: bytes))
            #expect(a.kind == .number && a.number == -500 && Array(bytes[a.written]) == Array("-0.5e3".utf8))
            let d = try #require(scanner.member("d", in: bytes))
            #expect(d.kind == .nested && String(decoding: scanner.bytes(d.value, in: bytes), as: UTF8.self) == #"[1,{"e":"]"}]"#)
            let s = try #require(scanner.member("s", in: bytes))
            #expect(s.kind == .string && String(decoding: scanner.bytes(s.value, in: bytes), as: UTF8.self) == "tab\there")
            #expect(scanner.hasSpecialBytes)
        }
    }
}
