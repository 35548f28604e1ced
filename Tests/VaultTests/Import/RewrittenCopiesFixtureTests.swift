import Foundation
@testable import HealthModel
import Testing
@testable import Vault
import TestSupport
import VaultTestSupport

/// Issue 36, items 6 and 7, on a real export (Tests/Fixtures/apple-health/comocomo: an iOS 10
/// export of 2017 in which the lark app wrote the same energy and distance samples up to 17
/// times, a second apart): the rewrites, the day totals and the metadata `sql` shows are checked
/// against a count of the file's tags made without the importer (`unzip -p` and regular
/// expressions; Foundation's `XMLParser` crashes on exports on Linux).
@Suite(.timeLimit(.minutes(10))) struct RewrittenCopiesFixtureTests {
    /// A top-level element's attributes and its metadata entries.
    struct Element {
        var name: String
        var attributes: [String: String]
        var metadata: [(key: String, value: String)] = []
    }

    /// The top-level `Record`, `Correlation` and `Workout` elements, in order.
    static func scan(_ text: String) -> [Element] {
        let tag = try! NSRegularExpression(pattern: "<(/?)([A-Za-z][\\w.-]*)([^>]*?)(/?)>")
        let attribute = try! NSRegularExpression(pattern: "([A-Za-z_][\\w:.-]*)\\s*=\\s*\"([^\"]*)\"")
        let ns = text as NSString
        var elements: [Element] = []
        var depth = 0
        for m in tag.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let name = ns.substring(with: m.range(at: 2))
            if name.hasPrefix("?") || name == "!DOCTYPE" { continue }
            if m.range(at: 1).length > 0 { depth -= 1; continue }
            let rest = ns.substring(with: m.range(at: 3)) as NSString
            var attributes: [String: String] = [:]
            for a in attribute.matches(in: rest as String, range: NSRange(location: 0, length: rest.length)) {
                attributes[rest.substring(with: a.range(at: 1))] = unescape(rest.substring(with: a.range(at: 2)))
            }
            depth += 1
            if depth == 2, ["Record", "Correlation", "Workout"].contains(name) {
                elements.append(Element(name: name, attributes: attributes))
            } else if depth == 3, name == "MetadataEntry", !elements.isEmpty {
                elements[elements.count - 1].metadata.append((attributes["key"] ?? "", attributes["value"] ?? ""))
            }
            if m.range(at: 4).length > 0 { depth -= 1 }
        }
        return elements
    }

    static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// A record's content but its creation date: type, source name, device model, unit, value,
    /// start, end and metadata.
    static func content(_ r: Element) -> String {
        let metadata = r.metadata.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "|")
        return ["type", "sourceName", "unit", "value", "startDate", "endDate"].map { r.attributes[$0] ?? "" }.joined(separator: "|")
            + "|" + model(r) + "|" + metadata
    }

    /// The device's model, from Apple's `HKDevice` description (its address differs per record).
    static func model(_ r: Element) -> String {
        guard let device = r.attributes["device"], let range = device.range(of: "model:[^,>]*", options: .regularExpression) else { return "" }
        return String(device[range])
    }

    @Test func rewritesDayTotalsAndMetadataMatchTheFilesOwnCount() throws {
        let zip = Fixtures.path("comocomo/export.zip")
        let elements = Self.scan(try ExportRecordCount.xml(inZip: zip))
        let records = elements.filter { $0.name == "Record" }
        #expect(records.count == 10_939)

        // Rewrites: per content, the copies beyond the most that share one creation date, for
        // types whose values add up (the others are not totalled).
        var byContent: [String: [String: Int]] = [:]
        for r in records where AggregationStyle.of(type: r.attributes["type"] ?? "") == .cumulative {
            byContent[Self.content(r), default: [:]][r.attributes["creationDate"] ?? "", default: 0] += 1
        }
        let expectedRewrites = byContent.values.reduce(0) { $0 + $1.values.reduce(0, +) - $1.values.max()! }
        #expect(expectedRewrites == 151)

        let t = try ImportTestVault()
        let report = try t.vault.importFiles([zip])
        #expect(report.added == 11_035 && report.rejected == 0)
        #expect(report.rewrites == expectedRewrites)

        // Day totals of energy and walking distance on the days one app alone recorded them, with
        // no record across midnight: each content counted as often as its largest creation group.
        for (type, factor) in [("HKQuantityTypeIdentifierActiveEnergyBurned", 1.0), ("HKQuantityTypeIdentifierDistanceWalkingRunning", 1000.0)] {
            let ofType = records.filter { $0.attributes["type"] == type }
            #expect(Set(ofType.map { $0.attributes["unit"] ?? "" }) == [factor == 1 ? "kcal" : "km"])
            var days: [String: [Element]] = [:]
            for r in ofType { days[String(r.attributes["startDate"]!.prefix(10)), default: []].append(r) }
            // Days a record of an earlier day reaches into are left out, as are the earlier days.
            let crossed = Set(ofType.compactMap { r -> [String]? in
                let (start, end) = (String(r.attributes["startDate"]!.prefix(10)), String(r.attributes["endDate"]!.prefix(10)))
                return start == end ? nil : [start, end]
            }.joined())
            let vaultDays = Dictionary(uniqueKeysWithValues: try t.vault.summary(metric: type, by: .day).map { ($0.period, $0.value) })
            var checked = 0
            for (day, list) in days {
                guard Set(list.map { "\($0.attributes["sourceName"]!)|\(Self.model($0))" }).count == 1,
                      !crossed.contains(day) else { continue }
                var groups: [String: [String: Int]] = [:]
                var values: [String: Double] = [:]
                for r in list {
                    groups[Self.content(r), default: [:]][r.attributes["creationDate"]!, default: 0] += 1
                    values[Self.content(r)] = Double(r.attributes["value"]!)! * factor
                }
                let expected = groups.reduce(0.0) { $0 + values[$1.key]! * Double($1.value.values.max()!) }
                let got = try #require(vaultDays[day])
                #expect(abs(got - expected) < 1e-6 * max(1, expected), "\(type) \(day): \(got) against \(expected)")
                checked += 1
            }
            #expect(checked >= 20, "\(type): \(checked) single-source days checked")
        }

        // Metadata, queryable with `sql`: every top-level record's, correlation's and workout's
        // entries per type, key, value and the local day it started (as written in the file).
        var expectedMetadata: [String: Int] = [:]
        for e in elements {
            let type = e.attributes["type"] ?? e.attributes["workoutActivityType"] ?? ""
            for entry in e.metadata {
                expectedMetadata["\(type)|\(entry.key)|\(entry.value)|\(e.attributes["startDate"]!.prefix(10))", default: 0] += 1
            }
        }
        #expect(expectedMetadata.values.reduce(0, +) == 1_640)
        let rows = try t.vault.query("SELECT type, key, value, date, records FROM metadata_by_day").rows
        var stored: [String: Int] = [:]
        for row in rows {
            let text = row.map { value -> String in
                switch value {
                case .text(let s): s
                case .integer(let n): "\(n)"
                default: "?"
                }
            }
            stored[text[0..<4].joined(separator: "|"), default: 0] += Int(text[4])!
        }
        #expect(stored == expectedMetadata)
    }
}
