import Foundation
import HealthModel
import VaultEvents

/// Reads what a phone companion app posts:
/// `{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38}]}`,
/// or an array of such objects. Times are local. A metric without a known HealthKit type is kept
/// under `other` with its own name. Each entry that cannot be read is rejected alone.
struct CompanionJSONImporter {
    let sink: ImportSink
    let timeZone: TimeZone
    /// Companion posts are small; a larger file is refused rather than read whole.
    static let maxBytes = 64 << 20

    func importJSON(_ input: ImportInput) throws {
        let path = input.name
        let tooLarge = ImportError.unreadable(path: path, reason: "larger than \(Self.maxBytes >> 20) MiB; split it")
        guard (input.size ?? 0) <= Int64(Self.maxBytes) else { throw tooLarge }
        var data = Data()
        do {
            try input.read { chunk in
                guard data.count + chunk.count <= Self.maxBytes else { throw tooLarge }
                data.append(chunk)
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError.unreadable(path: path, reason: "\(error.localizedDescription)")
        }
        let posts: [Post]
        do {
            if let many = try? JSONDecoder().decode([Post].self, from: data) { posts = many } else {
                posts = [try JSONDecoder().decode(Post.self, from: data)]
            }
        } catch DecodingError.dataCorrupted {
            let (location, reason) = Self.diagnose(data)
            throw ImportError.notWellFormed(path: path, location: location, message: "not valid JSON" + reason)
        } catch {
            throw ImportError.notAnExport(path: path, reason: "expected {\"metric\":…,\"data\":[…]} or an array of them")
        }
        var tally: [String: (count: Int, first: String)] = [:]
        func reject(_ reason: String, _ place: String) {
            tally[reason] = tally[reason].map { ($0.count + 1, $0.first) } ?? (1, place)
            sink.reject(1)
        }
        let source = HealthSource(name: "Companion app", version: nil, device: HealthDevice(model: "iPhone"))
        for (p, post) in posts.enumerated() {
            let metricName = post.metric, entries = post.data
            let resolution = TypeNames.resolve(metricName)
            for (i, entry) in entries.enumerated() {
                let place = posts.count > 1 ? "[\(p)].data[\(i)]" : "data[\(i)]"
                let type: String, unit: String
                switch resolution {
                case .known(let identifier, let implied) where identifier.hasPrefix("HKQuantityTypeIdentifier"):
                    (type, unit) = (identifier, implied ?? "")
                case .known:
                    // A category type (sleep stages, symptoms) has no number to post.
                    reject("a number for a type that takes a category value", place)
                    continue
                case .other(let name): (type, unit) = (name, "")
                case .refused(let category):
                    reject("a metric name this build does not know that reads as \(category.rawValue) data", place)
                    continue
                }
                guard let range = entry.timeRange, let slash = range.firstIndex(of: "/"),
                      let start = LocalTime.parse(range[..<slash], timeZone: timeZone),
                      let end = LocalTime.parse(range[range.index(after: slash)...], timeZone: timeZone) else {
                    reject("unparseable timeRange", place)
                    continue
                }
                guard AppleHealthHandler.plausible(start), AppleHealthHandler.plausible(end) else { reject("date out of range", place); continue }
                guard end.seconds >= start.seconds else { reject("ends before it starts", place); continue }
                guard let number = entry.value?.number, number.isFinite else {
                    reject("unparseable value", place)
                    continue
                }
                if number < 0, type.hasPrefix("HKQuantityTypeIdentifier"), AggregationStyle.of(type: type) == .cumulative { reject(RejectReason.negativeAmount.rawValue, place); continue }
                let value = number == number.rounded() && abs(number) < 1e15
                    ? DecimalValue(mantissa: Int64(number), scale: 0) : DecimalValue(double: number)
                try sink.emit(.sample(HealthSample(type: type, source: source, start: start, end: end,
                                                     value: .quantity(value, unit: unit))))
            }
        }
        for (reason, t) in tally.sorted(by: { $0.key < $1.key }) {
            sink.warn("\(t.count) entr\(t.count == 1 ? "y" : "ies") rejected: \(reason) (first at \(t.first))")
        }
    }

    struct Post: Decodable {
        var metric: String
        var data: [Entry]
    }

    /// Fields are read leniently so that one bad entry is rejected alone, not the whole post.
    struct Entry: Decodable {
        var timeRange: String?
        var value: LenientNumber?
    }

    /// A JSON number, or nil for anything else (strings, booleans, null).
    struct LenientNumber: Decodable {
        var number: Double?
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if (try? container.decode(Bool.self)) != nil { number = nil } else { number = try? container.decode(Double.self) }
        }
    }

    /// Where and why `data` is not JSON. The decoder says neither, so the parser is asked again,
    /// and its known phrases ("Invalid value", "Unexpected end of file", "Too many nested arrays
    /// or dictionaries") are passed on, never a byte of the input.
    static func diagnose(_ data: Data) -> (SourceLocation, String) {
        let detail: String
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return (SourceLocation(line: 1, column: 1), "")
        } catch {
            detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        }
        var location = SourceLocation(line: 1, column: 1)
        if let r = detail.range(of: #"character \d+"#, options: .regularExpression), let offset = Int(detail[r].dropFirst(10)) {
            location = Self.location(ofByte: offset, in: data)
        } else if detail.hasPrefix("Unexpected end of file") {
            location = Self.location(ofByte: data.count, in: data)
        }
        // Only the parser's known phrases are repeated: others may quote the input ("Number 1e400
        // is not representable").
        let known = ["Unexpected end of file", "Too many nested arrays or dictionaries", "Invalid value",
                     "Invalid escape sequence", "Unexpected character", "Invalid UTF-8", "Badly formed object",
                     "Badly formed array", "Number", "Garbage at end"]
        guard let phrase = known.first(where: { detail.hasPrefix($0) }) else { return (location, "") }
        return (location, ": " + (phrase == "Number" ? "a number out of range" : phrase))
    }

    /// Line and column (1-based, in bytes) of byte `offset` of `data`.
    static func location(ofByte offset: Int, in data: Data) -> SourceLocation {
        var line = 1, lineStart = 0
        for (index, byte) in data.prefix(offset).enumerated() where byte == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return SourceLocation(line: line, column: min(offset, data.count) - lineStart + 1)
    }
}
