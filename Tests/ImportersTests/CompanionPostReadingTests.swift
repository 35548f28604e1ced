import Foundation
@testable import Importers
import Testing

/// Companion posts read by `JSONPullReader` (`CompanionJSONImporter.yappiPosts`) against
/// Foundation's `JSONDecoder`, the oracle: every body the reader takes decodes to the same posts
/// there, every body it refuses is invalid JSON or left to the decoder, and the reader refuses
/// what JSON does not allow.
@Suite struct CompanionPostReadingTests {
    /// The posts as `JSONDecoder` reads them (an array of posts, else one), flattened for comparing.
    static func decoded(_ body: String) -> [[String]]? {
        let data = Data(body.utf8)
        let decoder = JSONDecoder()
        let posts = (try? decoder.decode([CompanionJSONImporter.Post].self, from: data))
            ?? (try? decoder.decode(CompanionJSONImporter.Post.self, from: data)).map { [$0] }
        return posts.map(flatten)
    }

    static func fast(_ body: String) -> [[String]]? {
        CompanionJSONImporter.yappiPosts(Data(body.utf8)).map(flatten)
    }

    static func flatten(_ posts: [CompanionJSONImporter.Post]) -> [[String]] {
        posts.map { post in
            [post.metric] + post.data.map { entry in
                "\(entry.timeRange ?? "<none>") = \(entry.value?.number.map { "\($0.bitPattern)" } ?? "<none>")"
            }
        }
    }

    @Test func whatAPhonePostsReadsAsTheDecoderReadsIt() {
        let bodies = [
            #"{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38}]}"#,
            #"[{"metric":"STEPS","data":[]},{"metric":"HEART_RATE","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 08:01","value":61.5}]}]"#,
            "  \n\t{ \"data\" : [ { \"value\" : -0 , \"timeRange\" : \"a/b\" } ] , \"metric\" : \"x\" }\r\n ",
            #"{"metric":"ST\u0045PS","data":[{"timeRange":"\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t","value":1.5e3}]}"#,
            #"{"metric":"STEPS","extra":{"a":[1,2,{"b":null}],"c":"d"},"data":[{"timeRange":null,"value":null,"note":[true,false]}]}"#,
            #"{"metric":"STEPS","data":[{"value":"12"},{"value":true},{"value":false},{"value":{}},{"value":[]},{}]}"#,
            #"{"metric":"STEPS","data":[{"value":1e400},{"value":-1e400},{"value":1e-400},{"value":-1e-400},{"value":5e-324},{"value":0e-999},{"value":12345678901234567890}]}"#,
            #"{"metric":"STEPS","data":[{"value":0.1},{"value":-2.5E-3},{"value":7E+2},{"value":0}]}"#,
            // A number no Double holds, where nothing reads it: JSON allows it, and so does the decoder.
            #"{"metric":"STEPS","data":[{"value":2,"note":1e999}],"extra":[2.5e311,-1e-400]}"#,
            #"[]"#,
        ]
        for body in bodies {
            let fast = Self.fast(body)
            #expect(fast != nil, "refused: \(body)")
            #expect(fast == Self.decoded(body), "\(body)")
        }
    }

    @Test func generatedPostsReadAsTheDecoderReadsThem() {
        var rng = SystemRandomNumberGenerator()
        let spaces = ["", " ", "\n", "\t ", "\r\n  "]
        func space() -> String { spaces.randomElement(using: &rng)! }
        let values = ["0", "-0", "1", "38", "61.5", "-12.25", "1e3", "2.5E-2", "123456789012", "0.000001", "\"7\"", "true", "null", "[]", "{\"k\":1}"]
        let texts = ["2025-08-06 08:00/2025-08-06 09:00", "", "caf\\u00e9", "tab\\tnew\\nline", "slash\\/quote\\\"", "\\ud83c\\udfc3 run"]
        for _ in 0..<300 {
            let entries = (0..<Int.random(in: 0...6, using: &rng)).map { _ -> String in
                var members: [String] = []
                if Bool.random(using: &rng) { members.append("\"timeRange\"\(space()):\(space())\"\(texts.randomElement(using: &rng)!)\"") }
                if Bool.random(using: &rng) { members.append("\"value\"\(space()):\(space())\(values.randomElement(using: &rng)!)") }
                if Int.random(in: 0..<4, using: &rng) == 0 { members.append("\"source\":\(space())\"Watch\"") }
                return "{" + space() + members.shuffled(using: &rng).joined(separator: "," + space()) + space() + "}"
            }
            var members = ["\"metric\":\"STEPS\"", "\"data\":[" + entries.joined(separator: "," + space()) + "]"]
            if Bool.random(using: &rng) { members.append("\"app\":{\"v\":[1,2.5,\"x\"]}") }
            let post = "{" + space() + members.shuffled(using: &rng).joined(separator: space() + "," + space()) + "}"
            let body = Bool.random(using: &rng) ? space() + post + space() : "[" + post + "," + space() + post + "]"
            let fast = Self.fast(body)
            #expect(fast != nil && fast == Self.decoded(body), "\(body)")
        }
    }

    /// The fuzz corpus's companion bodies (Health Auto Export's, Yappi's, broken ones) and those
    /// bodies cut, with bytes flipped, dropped or doubled: whatever the reader takes, the decoder
    /// reads the same; whatever it refuses is left to the decoder.
    @Test func corpusBodiesAndTheirMutationsReadAsTheDecoderReadsThem() throws {
        let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz")
        var bodies: [[UInt8]] = []
        for folder in ["corpus/json", "regressions/json"] {
            let directory = fuzz.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
                bodies.append(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
            }
        }
        #expect(bodies.count > 100)
        var rng = SystemRandomNumberGenerator()
        var taken = 0, mutatedTaken = 0
        for body in bodies {
            var variants = [body]
            for _ in 0..<8 where !body.isEmpty {
                var mutated = body
                let at = Int.random(in: 0..<mutated.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: mutated[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                case 1: mutated.remove(at: at)
                case 2: mutated.insert(mutated[at], at: at)
                default: mutated.removeSubrange(at...)
                }
                variants.append(mutated)
            }
            for (index, variant) in variants.enumerated() {
                let data = Data(variant)
                guard let fast = CompanionJSONImporter.yappiPosts(data).map(Self.flatten) else { continue }
                if index == 0 { taken += 1 } else { mutatedTaken += 1 }
                let decoder = JSONDecoder()
                let oracle = ((try? decoder.decode([CompanionJSONImporter.Post].self, from: data))
                    ?? (try? decoder.decode(CompanionJSONImporter.Post.self, from: data)).map { [$0] }).map(Self.flatten)
                #expect(fast == oracle, "\(String(decoding: variant.prefix(120), as: UTF8.self))")
            }
        }
        // Some of the corpus is Yappi's shape, and some mutations keep it so.
        #expect(taken > 0 && mutatedTaken > 0, "\(taken) bodies and \(mutatedTaken) mutations taken")
    }

    @Test func invalidJSONIsRefusedAsFoundationRefusesIt() {
        let bodies = [
            "", " ", "{", "[", "{\"metric\":\"STEPS\",\"data\":[]", "{\"metric\":\"STEPS\",\"data\":[]}}",
            "{\"metric\":\"STEPS\" \"data\":[]}", "{\"metric\":'STEPS',\"data\":[]}",
            "{\"metric\":\"STEPS\",\"data\":[{\"value\":01}]}", "{\"metric\":\"STEPS\",\"data\":[{\"value\":1.}]}",
            "{\"metric\":\"STEPS\",\"data\":[{\"value\":.5}]}", "{\"metric\":\"STEPS\",\"data\":[{\"value\":+1}]}",
            "{\"metric\":\"STEPS\",\"data\":[{\"value\":1e}]}", "{\"metric\":\"STEPS\",\"data\":[{\"value\":-}]}",
            "{\"metric\":\"STEPS\",\"data\":[{\"value\":tru}]}", "{\"metric\":\"STEPS\",\"data\":[{\"value\":nul}]}",
            "{\"metric\":\"ST\nEPS\",\"data\":[]}", "{\"metric\":\"\\x\",\"data\":[]}", "{\"metric\":\"\\u12\",\"data\":[]}",
            "{\"metric\":\"\\ud83d\",\"data\":[]}", "{\"metric\":\"\\ude00\",\"data\":[]}", "{\"metric\":\"STEPS\",\"data\":[1 2]}",
            "{\"metric\":\"STEPS\",\"data\":[}", "{\"metric\":\"STEPS\",\"data\":[]} x", "{metric:\"STEPS\",\"data\":[]}",
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        ]
        for body in bodies {
            #expect(Self.fast(body) == nil, "taken: \(body.prefix(80))")
            #expect((try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])) == nil, "JSON after all: \(body.prefix(80))")
        }
        // Bytes that are not UTF-8, in a string.
        let invalidUTF8 = Data("{\"metric\":\"".utf8) + Data([0xC3, 0x28]) + Data("\",\"data\":[]}".utf8)
        #expect(CompanionJSONImporter.yappiPosts(invalidUTF8) == nil)
    }

    @Test func whatOnlyTheDecoderShouldJudgeIsLeftToIt() {
        // Valid JSON that is not a Yappi post, or holds a key twice, or a field of the wrong type.
        let bodies = [
            #"{"data":{"metrics":[]}}"#, #"{"metric":"STEPS"}"#, #"{"data":[]}"#, #"{"metric":5,"data":[]}"#,
            #"{"metric":"STEPS","data":{}}"#, #"{"metric":"STEPS","data":[5]}"#, #"{"metric":"STEPS","data":[{"timeRange":5}]}"#,
            #"{"metric":"A","metric":"B","data":[]}"#, #"{"metric":"STEPS","data":[{"value":1,"value":2}]}"#,
            #"{"metric":"STEPS","data":null}"#, #""STEPS""#, "12", "[{\"metric\":\"STEPS\",\"data\":[]}, 5]",
        ]
        for body in bodies {
            #expect(Self.fast(body) == nil, "taken: \(body)")
        }
        // Foundation's parser takes an object's trailing comma, which JSON does not allow: the
        // reader refuses it and the decoder reads the post, as it did before the reader.
        let trailingComma = #"{"metric":"STEPS","data":[{"value":1}],}"#
        #expect(Self.fast(trailingComma) == nil)
        #expect(Self.decoded(trailingComma) == [["STEPS", "<none> = \(Double(1).bitPattern)"]])
    }
}
