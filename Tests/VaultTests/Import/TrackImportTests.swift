import Foundation
@testable import HealthModel
@testable import Importers
import Testing
@testable import Vault
import VaultTestSupport

/// GPX tracks of other apps and TCX files (issue 40) against Python's own XML parser counting
/// the same files (`Tests/Fixtures/tracks/oracle.json`, made by `scripts/track-oracle.py`): a
/// workout each, spanning the track, with its route and heart rate; TCX laps, time, distance and
/// energy as the file sums them.
@Suite struct TrackImportTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/tracks").path

    static var oracle: [String: [String: Any]] {
        let data = try! Data(contentsOf: URL(fileURLWithPath: directory + "/oracle.json"))
        return (try! JSONSerialization.jsonObject(with: data) as! [String: Any])["files"] as! [String: [String: Any]]
    }

    static let files = (try? FileManager.default.contentsOfDirectory(atPath: directory))?
        .filter { $0.hasSuffix(".gpx") || $0.hasSuffix(".tcx") }.sorted() ?? []

    struct Imported {
        var workouts: [Workout] = []
        var routes: [WorkoutRoute] = []
        var heartRates = 0
    }

    static func imported(_ file: String) throws -> Imported {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([directory + "/" + file], timeZone: TimeZone(identifier: "UTC")!)
        #expect(report.added > 0, "\(file)")
        var result = Imported()
        for (_, event) in try t.vault.allEvents() {
            switch event {
            case .workout(let w): result.workouts.append(w)
            case .route(let r): result.routes.append(r)
            case .sample(let s) where s.type == "HKQuantityTypeIdentifierHeartRate": result.heartRates += 1
            default: break
            }
        }
        let again = try t.vault.importFiles([directory + "/" + file], timeZone: TimeZone(identifier: "UTC")!)
        #expect(again.added == 0, "\(file): a second import added \(again.added)")
        return result
    }

    @Test(arguments: files) func eachTrackIsAWorkoutWithWhatItsFileHolds(file: String) throws {
        let expected = try #require(Self.oracle[file])
        let got = try Self.imported(file)
        if file.hasSuffix(".gpx") {
            #expect(got.workouts.count == 1, "\(file)")
            #expect(got.workouts.first.map { Int($0.start.seconds) } == expected["first"] as? Int, "\(file) start")
            #expect(got.workouts.first.map { Int($0.end.seconds) } == expected["last"] as? Int, "\(file) end")
            #expect(got.workouts.first?.activityType == GPXWorkout.activityType(expected["type"] as? String), "\(file) type")
            #expect(got.workouts.first?.source.name == expected["creator"] as? String, "\(file) source")
            #expect(got.routes.first?.points.count == expected["points"] as? Int, "\(file) route points")
            #expect(got.heartRates == expected["withHeartRate"] as? Int, "\(file) heart rates")
        } else {
            let activities = try #require(expected["activities"] as? [[String: Any]])
            #expect(got.workouts.count == activities.count, "\(file)")
            for (workout, activity) in zip(got.workouts.sorted { $0.start.seconds < $1.start.seconds }, activities) {
                #expect(Int(workout.start.seconds) == activity["start"] as? Int, "\(file) start")
                #expect(workout.events.count == activity["laps"] as? Int, "\(file) laps")
                if let seconds = activity["seconds"] as? Double { #expect(abs((workout.duration?.double ?? -1) - seconds / 60) < 1e-6, "\(file) minutes") }
                if let meters = activity["meters"] as? Double { #expect(abs((workout.totalDistance?.double ?? -1) - meters) < 1e-3, "\(file) distance") }
                if let calories = activity["calories"] as? Double { #expect(abs((workout.totalEnergy?.double ?? -1) - calories) < 1e-3, "\(file) energy") }
            }
            #expect(got.routes.map(\.points.count).reduce(0, +) == activities.reduce(0) { $0 + ($1["withPosition"] as? Int ?? 0) }, "\(file) route points")
            #expect(got.heartRates == activities.reduce(0) { $0 + ($1["withHeartRate"] as? Int ?? 0) }, "\(file) heart rates")
        }
    }
}
