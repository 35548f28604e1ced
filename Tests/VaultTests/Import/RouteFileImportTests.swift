import Foundation
@testable import HealthModel
@testable import Importers
import Testing
@testable import Vault
@testable import VaultEvents

/// Route files of a zip are inflated and parsed on two threads of their own, every other file
/// each (`RouteReader`): each must reach the route of the workout that names it, in order,
/// whatever happened to the file before it.
@Suite struct RouteFileImportTests {
    static func workout(_ hour: Int, route: String) -> String {
        let start = String(format: "2024-01-01 %02d:00:00 +0100", hour)
        let end = String(format: "2024-01-01 %02d:30:00 +0100", hour)
        return """
         <Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="30" durationUnit="min" sourceName="Watch" startDate="\(start)" endDate="\(end)">
          <WorkoutRoute sourceName="Watch" startDate="\(start)" endDate="\(end)">
           <FileReference path="/workout-routes/\(route)"/>
          </WorkoutRoute>
         </Workout>
        """
    }

    /// A GPX file of `points` points, the first at latitude `latitude`.
    static func gpx(latitude: Double, points: Int) -> String {
        let body = (0..<points).map { i in
            String(format: "<trkpt lat=\"%.4f\" lon=\"13.4\"><ele>30</ele><time>2024-01-01T09:%02d:%02dZ</time></trkpt>", latitude + Double(i) / 10_000, i / 60 % 60, i % 60)
        }.joined(separator: "\n")
        return "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\"><trk><trkseg>\n\(body)\n</trkseg></trk></gpx>\n"
    }

    /// The routes in the vault, by their file, with their first latitude and point count.
    static func routes(_ t: ImportTestVault) throws -> [String: (Double, Int)] {
        var found: [String: (Double, Int)] = [:]
        for case .route(let r) in try t.dataEvents() { found[r.filePath] = (r.points.first?.latitude ?? 0, r.points.count) }
        return found
    }

    /// A route file that is not well-formed early in its first chunk of several is skipped with a
    /// warning naming it; the rest of its chunks are passed over, and the next file is read whole.
    @Test func aDamagedRouteFileIsSkippedAndTheNextOneIsReadWhole() throws {
        let t = try ImportTestVault()
        // 600 KB after the fault: the file spans three of the inflater's 256 KB chunks.
        let padding = String(repeating: "<!-- \(String(repeating: "x", count: 1000)) -->\n", count: 600)
        let broken = "<?xml version=\"1.0\"?>\n<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"></trkpx>\n" + padding + "</trkseg></trk></gpx>\n"
        let body = [Self.workout(8, route: "a.gpx"), Self.workout(10, route: "b.gpx"), Self.workout(12, route: "gone.gpx"), Self.workout(14, route: "c.gpx")]
        let zip = try t.zip("export.zip", [
            ("apple_health_export/export.xml", export(body.joined(separator: "\n"))),
            ("apple_health_export/workout-routes/a.gpx", Self.gpx(latitude: 52.5, points: 3)),
            ("apple_health_export/workout-routes/b.gpx", broken),
            ("apple_health_export/workout-routes/c.gpx", Self.gpx(latitude: 48.1, points: 700)),
        ])
        let report = try t.vault.importFiles([zip])
        #expect(report.added == 6)
        #expect(report.files[0].warnings == [
            "route file apple_health_export/workout-routes/b.gpx skipped: \(zip):apple_health_export/workout-routes/b.gpx:2:42: not well-formed XML: end tag does not match the open element",
            "1 route file(s) named by workouts are missing from the zip",
        ])
        let routes = try Self.routes(t)
        #expect(routes.count == 2)
        #expect(routes["/workout-routes/a.gpx"]?.0 == 52.5 && routes["/workout-routes/a.gpx"]?.1 == 3)
        #expect(routes["/workout-routes/c.gpx"]?.0 == 48.1 && routes["/workout-routes/c.gpx"]?.1 == 700)
    }

    /// A route file whose contents do not match its CRC-32 is skipped with the zip's damage
    /// named; the files around it are read.
    @Test func aRouteFileThatDoesNotMatchItsCRCIsSkipped() throws {
        let t = try ImportTestVault()
        let body = [Self.workout(8, route: "a.gpx"), Self.workout(10, route: "b.gpx"), Self.workout(12, route: "c.gpx")]
        let good = try t.zip("good.zip", [
            ("apple_health_export/export.xml", export(body.joined(separator: "\n"))),
            ("apple_health_export/workout-routes/a.gpx", Self.gpx(latitude: 52.5, points: 3)),
            ("apple_health_export/workout-routes/b.gpx", Self.gpx(latitude: 40.0, points: 5)),
            ("apple_health_export/workout-routes/c.gpx", Self.gpx(latitude: 48.1, points: 7)),
        ])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let name = Array("apple_health_export/workout-routes/b.gpx".utf8)
        func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        func u32(_ i: Int) -> UInt32 { UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24 }
        // The CRC of b.gpx's local header (offset 14, name at 30) and central record (16, name at 46).
        var patched = 0
        for i in 0..<(bytes.count - 46) {
            if u32(i) == 0x0403_4B50, u16(i + 26) == name.count, Array(bytes[(i + 30)..<(i + 30 + name.count)]) == name { bytes[i + 14] ^= 0xFF; patched += 1 }
            if u32(i) == 0x0201_4B50, u16(i + 28) == name.count, Array(bytes[(i + 46)..<(i + 46 + name.count)]) == name { bytes[i + 16] ^= 0xFF; patched += 1 }
        }
        #expect(patched == 2)
        let damaged = t.dir.path + "/damaged.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let report = try t.vault.importFiles([damaged])
        #expect(report.added == 5)
        #expect(report.files[0].warnings == [
            "route file apple_health_export/workout-routes/b.gpx skipped: \(damaged):apple_health_export/workout-routes/b.gpx: cannot be read: the zip entry's contents do not match its CRC-32 (the zip is damaged)",
        ])
        let routes = try Self.routes(t)
        #expect(routes.count == 2)
        #expect(routes["/workout-routes/a.gpx"]?.0 == 52.5 && routes["/workout-routes/c.gpx"]?.1 == 7)
    }

    /// Nine route files, read on two threads every other file, reach the log in the order the
    /// workouts name them, each with its own points.
    @Test func routesArriveInTheWorkoutsOrder() throws {
        let t = try ImportTestVault()
        let names = (1...9).map { "r\(10 - $0).gpx" }
        let body = names.enumerated().map { Self.workout(8 + $0.offset, route: $0.element) }
        let zip = try t.zip("export.zip", [("apple_health_export/export.xml", export(body.joined(separator: "\n")))]
            + names.enumerated().map { ("apple_health_export/workout-routes/\($0.element)", Self.gpx(latitude: 40 + Double($0.offset), points: 10 + $0.offset)) })
        let report = try t.vault.importFiles([zip])
        #expect(report.added == 18)
        #expect(report.files[0].warnings == [])
        var order: [String] = []
        for case .route(let r) in try t.dataEvents() {
            order.append(r.filePath)
            let index = names.firstIndex { "/workout-routes/" + $0 == r.filePath }!
            #expect(r.points.first?.latitude == 40 + Double(index) && r.points.count == 10 + index)
        }
        #expect(order == names.map { "/workout-routes/" + $0 })
    }
}
