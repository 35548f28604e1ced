import Foundation
@testable import HealthModel
import Testing
import VaultTestSupport
@testable import Vault

/// Every real export in `Tests/Fixtures/apple-health` reconciles (issue 16): each of its records is
/// added, a duplicate, rejected (with a named reason) or a repeat of a correlation's member, and
/// the records per type the vault holds match a count made without the importer, by a scan of
/// the tags with regular expressions. (Foundation's `XMLParser` crashes on these files on Linux.)
@Suite struct ExportReconciliationTests {
    /// Counted from the tags: top-level records per type (HealthKit type, workout activity type,
    /// or element) and correlation members that repeat no top-level record.
    final class IndependentCount {
        var perType: [String: Int] = [:]
        var records = 0
        var repeats = 0
        private var depth = 0
        private var inCorrelation = false
        private var topLevel = Set<String>()
        private var nested: [String] = []
        private var current: (key: String, type: String, nested: Bool)?
        private var routeHasPoints = false

        init(text: String) {
            // The DOCTYPE's internal subset and comments hold declarations, not elements.
            var body = text.replacingOccurrences(of: "<!--[\\s\\S]*?-->", with: "", options: .regularExpression)
            body = body.replacingOccurrences(of: "<!DOCTYPE[\\s\\S]*?\\]>", with: "", options: .regularExpression)
            let tag = try! NSRegularExpression(pattern: "<(/?)([A-Za-z][\\w.-]*)([^>]*?)(/?)>")
            let attribute = try! NSRegularExpression(pattern: "([A-Za-z_][\\w:.-]*)\\s*=\\s*\"([^\"]*)\"")
            let ns = body as NSString
            for m in tag.matches(in: body, range: NSRange(location: 0, length: ns.length)) {
                let name = ns.substring(with: m.range(at: 2))
                if m.range(at: 1).length > 0 {
                    end(name)
                    continue
                }
                let rest = ns.substring(with: m.range(at: 3)) as NSString
                var attributes: [String: String] = [:]
                for a in attribute.matches(in: rest as String, range: NSRange(location: 0, length: rest.length)) {
                    attributes[rest.substring(with: a.range(at: 1))] = rest.substring(with: a.range(at: 2))
                }
                start(name, attributes)
                if m.range(at: 4).length > 0 { end(name) }
            }
            finish()
        }

        private func start(_ name: String, _ attributes: [String: String]) {
            depth += 1
            let attributeKey = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "|")
            switch (depth, name) {
            case (2, "Record"):
                current = (attributeKey, attributes["type"] ?? "", false)
            case (3, "Record") where inCorrelation:
                current = (attributeKey, attributes["type"] ?? "", true)
            case (2, "Correlation"):
                inCorrelation = true
                count(attributes["type"] ?? name)
            case (2, "Workout"):
                count(attributes["workoutActivityType"] ?? name)
            case (2, "ActivitySummary"):
                count("HKActivitySummaryTypeIdentifier")
            case (2, "Me"):
                count("Me")
            case (2, "ExportDate"):
                break
            case (2, _):
                count(attributes["type"] ?? name)
            case (4, "Location"):
                routeHasPoints = true
            case (_, "MetadataEntry") where current != nil:
                current!.key += "|\(attributes["key"] ?? "")=\(attributes["value"] ?? "")"
            default:
                break
            }
        }

        private func end(_ name: String) {
            if name == "Record", let c = current, depth == (c.nested ? 3 : 2) {
                if c.nested { nested.append(c.key + "#" + c.type) } else {
                    topLevel.insert(c.key)
                    count(c.type)
                }
                current = nil
            }
            if depth == 2, name == "Correlation" { inCorrelation = false }
            // A route written inline (exports before iOS 12) is a record of its own.
            if depth == 3, name == "WorkoutRoute", routeHasPoints {
                records += 1
                routeHasPoints = false
            }
            depth -= 1
        }

        private func finish() {
            var seen = Set<String>()
            for entry in nested {
                let key = String(entry[..<entry.lastIndex(of: "#")!]), type = String(entry[entry.index(after: entry.lastIndex(of: "#")!)...])
                records += 1
                if topLevel.contains(key) || !seen.insert(key).inserted { repeats += 1 } else { perType[type, default: 0] += 1 }
            }
        }

        private func count(_ type: String) {
            records += 1
            perType[type, default: 0] += 1
        }
    }

    static let files = ["dogsheep/export.xml", "alxdrcirilo/export.xml", "y-yu/export.xml", "opendroid/sampleexport.xml", "opendroid/sampleexport-2.xml",
                        "tdda/export6s3sample.xml"]

    @Test(arguments: files) func everyRecordIsAccountedForAndTheTypesMatchAnIndependentCount(file: String) throws {
        let path = Fixtures.path(file)
        let counter = IndependentCount(text: try String(contentsOfFile: path, encoding: .utf8))
        #expect(counter.records > 0)

        let t = try ImportTestVault()
        let report = try t.vault.importFiles([path]).files[0]
        #expect(report.added + report.duplicates + report.rejected + report.repeats == counter.records, "\(report)")
        #expect(report.duplicates == 0, "\(report)")
        // A rejected record is named in a warning with its reason and place.
        if report.rejected > 0 { #expect(report.warnings.contains { $0.contains("rejected:") && $0.contains("first at") }) }
        var held: [String: Int] = [:]
        for row in try t.vault.heldTypes() where row.type != "HKWorkoutRouteTypeIdentifier" { held[row.type, default: 0] += row.count }
        if report.rejected == 0 {
            #expect(held == counter.perType)
        } else {
            #expect(held.values.reduce(0, +) + report.rejected == counter.perType.values.reduce(0, +))
        }
        // Importing it again adds nothing, and counts the same records as duplicates.
        let again = try t.vault.importFiles([path]).files[0]
        #expect(again.added == 0 && again.duplicates == report.added && again.repeats == report.repeats, "\(again)")
    }
}

/// Sleep and workout figures on real files, computed by hand from their records.
@Suite struct RealFileFiguresTests {
    @Test func aRealNightIsWhatItsRecordsAddUpTo() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([Fixtures.path("alxdrcirilo/export.xml")])
        // In bed 00:55:28–00:56:53 (85 s, the iPhone); core 03:27:53–03:40:23 (12.5 min, the Watch).
        let nights = try t.vault.sleep()
        #expect(nights.count == 1)
        let n = nights[0]
        #expect(n.night == LocalDay(year: 2024, month: 1, day: 1) && n.start.iso8601 == "2024-01-01T00:55:28+02:00" && n.end.iso8601 == "2024-01-01T03:40:23+02:00")
        #expect(abs(n.inBed - 85.0 / 60) < 1e-9 && n.core == 12.5 && n.asleep == 12.5 && n.deep == 0 && n.awake == 0)
        #expect(n.source == "Alexandre's Apple Watch")
    }

    /// An iOS 9.3 export (version 3 DTD): records of 2014 carried over with the source `Health`,
    /// a workout of the first Watch.
    @Test func anIOS9ExportsStepsAndWorkoutAreWhatItsRecordsSay() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([Fixtures.path("tdda/export6s3sample.xml")])
        // Me, ten step records, five distances, two summaries, a workout.
        #expect(report.added == 19 && report.rejected == 0)
        // 329 + 283 + 426 + 61 + 10 + 200 + 390 + 320 + 216 + 282 on 2014-09-13 (+01:00).
        let steps = try t.vault.summary(metric: "steps", by: .day, from: nil, to: nil)
        #expect(steps.map(\.value) == [2517] && steps.map(\.period) == ["2014-09-13"])
        let rows = try t.vault.workouts(by: .day, from: LocalDay(year: 2016, month: 4, day: 2), to: LocalDay(year: 2016, month: 4, day: 2))
        // duration="31.73680251737436" min, totalDistance="0" km, totalEnergyBurned="139.3170000000021" kcal.
        #expect(rows.count == 1 && rows[0].type == "HKWorkoutActivityTypeOther" && rows[0].count == 1)
        #expect(abs(rows[0].minutes - 31.73680251737436) < 1e-9 && rows[0].distance == 0 && abs(rows[0].energy - 139.3170000000021) < 1e-9)
    }

    @Test func aRealWorkoutInMilesAndCaloriesIsInMetresAndKilocalories() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([Fixtures.path("opendroid/sampleexport-2.xml")])
        let rows = try t.vault.workouts(by: .day, from: LocalDay(year: 2018, month: 2, day: 1), to: LocalDay(year: 2018, month: 2, day: 1))
        // duration="38.35598726669947" min, totalDistance="2.169559267617529" mi, totalEnergyBurned="158.7939999999999" Cal.
        #expect(rows.count == 1 && rows[0].type == "HKWorkoutActivityTypeWalking" && rows[0].count == 1)
        #expect(abs(rows[0].minutes - 38.35598726669947) < 1e-9 && abs(rows[0].distance - 3491.5671899846648) < 1e-6
                && abs(rows[0].energy - 158.7939999999999) < 1e-9)
    }
}
