import Foundation
@testable import HealthModel
import Importers
import Testing
@testable import Vault
import VaultEvents
import VaultTestSupport

/// Route files as real exports have them (issue 36): Apple names two 30-second segments' files
/// alike, some files no workout names, and a GPX file comes alone from any app.
@Suite struct RouteEdgeTests {
    /// A track of six points, ten seconds apart from 08:00:05 UTC on 2024-03-05.
    static let track: String = {
        let points = (0..<6).map { i in
            #"<trkpt lat="52.5\#(i)" lon="13.4\#(i)"><ele>34</ele><time>2024-03-05T08:00:\#(String(format: "%02d", 5 + 10 * i))Z</time></trkpt>"#
        }.joined()
        return #"<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="Apple Health Export"><trk><trkseg>\#(points)</trkseg></trk></gpx>"#
    }()

    static func workout(_ start: String, _ end: String, file: String) -> String {
        """
        <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" startDate="\(start)" endDate="\(end)">
         <WorkoutRoute sourceName="Watch" startDate="\(start)" endDate="\(end)"><FileReference path="/workout-routes/\(file)"/></WorkoutRoute>
        </Workout>
        """
    }

    static func routes(_ t: ImportTestVault) throws -> [WorkoutRoute] {
        try t.dataEvents().compactMap { if case .route(let r) = $0 { r } else { nil } }
    }

    @Test func twoSegmentsNamingOneFileEachTakeTheirOwnPoints() throws {
        let t = try ImportTestVault()
        let zip = try t.zip("export.zip", [
            ("apple_health_export/export.xml", export(Self.workout("2024-03-05 09:00:00 +0100", "2024-03-05 09:00:30 +0100", file: "route_1.gpx")
                                                        + Self.workout("2024-03-05 09:00:30 +0100", "2024-03-05 09:01:00 +0100", file: "route_1.gpx"))),
            ("apple_health_export/workout-routes/route_1.gpx", Self.track),
        ])
        _ = try t.vault.importFiles([zip])
        let routes = try Self.routes(t)
        // Six points in all, not twelve: 08:00:05, :15, :25 in the first half minute, :35, :45, :55 in the second.
        #expect(routes.map(\.points.count) == [3, 3])
        #expect(routes.flatMap(\.points).map(\.latitude) == [52.5, 52.51, 52.52, 52.53, 52.54, 52.55])
    }

    @Test func aRouteFileNoWorkoutNamesIsKeptAndSaid() throws {
        let t = try ImportTestVault()
        let zip = try t.zip("export.zip", [
            ("apple_health_export/export.xml", export(Self.workout("2024-03-05 09:00:00 +0100", "2024-03-05 09:01:00 +0100", file: "route_1.gpx"))),
            ("apple_health_export/workout-routes/route_1.gpx", Self.track),
            ("apple_health_export/workout-routes/route_2.gpx", Self.track.replacingOccurrences(of: "2024-03-05", with: "2024-03-06")),
        ])
        let report = try t.vault.importFiles([zip])
        #expect(report.files[0].warnings.contains("1 route file(s) no workout names kept as routes of their own"))
        let routes = try Self.routes(t)
        #expect(routes.count == 2 && routes.map(\.points.count) == [6, 6])
        #expect(routes[1].workoutStart == HealthTimestamp(seconds: 1_709_712_005, utcOffset: 0))  // 2024-03-06T08:00:05Z
    }

    @Test func aRouteFileNoWorkoutNamesInAFolderIsKeptToo() throws {
        let t = try ImportTestVault()
        let folder = t.dir.path + "/apple_health_export"
        try FileManager.default.createDirectory(atPath: folder + "/workout-routes", withIntermediateDirectories: true)
        try Data(export(Self.workout("2024-03-05 09:00:00 +0100", "2024-03-05 09:01:00 +0100", file: "route_1.gpx")).utf8)
            .write(to: URL(fileURLWithPath: folder + "/export.xml"))
        try Data(Self.track.utf8).write(to: URL(fileURLWithPath: folder + "/workout-routes/route_1.gpx"))
        try Data(Self.track.replacingOccurrences(of: "2024-03-05", with: "2024-03-06").utf8)
            .write(to: URL(fileURLWithPath: folder + "/workout-routes/route_2.gpx"))
        let report = try t.vault.importFiles([folder + "/export.xml"])
        #expect(report.files[0].warnings.contains("1 route file(s) no workout names kept as routes of their own"), "\(report.files[0].warnings)")
        #expect(try Self.routes(t).map(\.points.count) == [6, 6])
    }

    @Test func aGPXFileAloneIsARouteOfItsOwn() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("Morning_Run.gpx", Self.track)])
        #expect(report.files[0].format == "gpx" && report.added == 1)
        let route = try #require(try Self.routes(t).first)
        #expect(route.points.count == 6 && route.filePath == "Morning_Run.gpx" && route.points.first?.altitude == 34)
        let empty = t.write("empty.gpx", #"<?xml version="1.0"?><gpx version="1.1"><trk><trkseg></trkseg></trk></gpx>"#)
        #expect(throws: ImportError.nothingImportable(path: empty, rejected: 1, reasons: ["1 track rejected: no point with a position and a time"])) {
            try t.vault.importFiles([empty])
        }
    }
}
