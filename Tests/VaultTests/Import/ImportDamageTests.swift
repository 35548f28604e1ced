import EventLog
import Foundation
@testable import HealthModel
@testable import Importers
import SyntheticHealth
import Testing
import VaultTestSupport
@testable import Vault
@testable import VaultEvents

/// The damage real exports carry, and files that are not exports at all.
@Suite struct ImportDamageTests {
    /// iOS 16 wrote a DTD whose `<!ATTLIST VisionPrescription` is never closed.
    @Test func theBrokenIOS16DTDDoesNotStopTheImport() throws {
        let t = try ImportTestVault()
        let doctype = """
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
        <!ATTLIST VisionPrescription
          type CDATA #REQUIRED
          dateIssued CDATA #REQUIRED
          expirationDate CDATA #IMPLIED
          brand CDATA #IMPLIED
        <!ELEMENT RightEye EMPTY>
        ]>

        """
        let file = t.write("export.xml", export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500"), doctype: doctype))
        let report = try t.vault.importFiles([file])
        #expect(report.added == 1 && report.rejected == 0)
    }

    /// A zip whose export entry does not match its stored CRC-32 (a bit that flipped on a disk
    /// or in a download after the zip was written) is refused, naming the file, and adds nothing.
    @Test func aZipEntryThatDoesNotMatchItsCRCIsRefused() throws {
        let t = try ImportTestVault()
        let good = try t.zip("good.zip", [("apple_health_export/export.xml", export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500")))])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        // The CRC field of the entry's local header (offset 14) and central directory record (16).
        var patched = 0
        for i in 0..<(bytes.count - 4) {
            let signature = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
            if signature == 0x0403_4B50 { bytes[i + 14] ^= 0xFF; patched += 1 }
            if signature == 0x0201_4B50 { bytes[i + 16] ^= 0xFF; patched += 1 }
        }
        #expect(patched == 2)
        let damaged = t.dir.path + "/damaged.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        #expect(throws: ImportError.unreadable(path: damaged + ":apple_health_export/export.xml",
                                               reason: "the zip entry's contents do not match its CRC-32 (the zip is damaged)")) {
            _ = try t.vault.importFiles([damaged])
        }
        #expect(try t.samples().isEmpty)
        #expect(try t.vault.importFiles([good]).added == 1)
    }

    @Test func controlCharactersInAttributesAreRemovedAndReported() throws {
        let t = try ImportTestVault()
        let record = stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500", source: "Jo\u{0B}’s iPhone")
        let report = try t.vault.importFiles([t.write("export.xml", export(record))])
        #expect(report.added == 1)
        #expect(report.files[0].warnings == ["2 control character(s) removed from attribute values"])
        #expect(try t.samples()[0].source.name == "Jo’s iPhone")
    }

    @Test func aBadRecordIsRejectedAloneWithItsPlace() throws {
        let t = try ImportTestVault()
        let body = [
            stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500"),
            stepRecord("2024-13-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "1"),
            stepRecord("2024-01-01 11:00:00 +0100", "2024-01-01 11:10:00 +0100", "NaN"),
            stepRecord("2024-01-01 12:00:00 +0100", "2024-01-01 11:10:00 +0100", "7"),
            stepRecord("1024-01-01 12:00:00 +0100", "1024-01-01 12:10:00 +0100", "7"),
            stepRecord("2024-01-01 13:00:00 +0100", "2024-01-01 13:10:00 +0100", "600"),
        ].joined(separator: "\n")
        let report = try t.vault.importFiles([t.write("export.xml", export(body))])
        #expect(report.added == 2 && report.rejected == 4)
        let warnings = report.files[0].warnings
        #expect(warnings.contains { $0.hasPrefix("1 record(s) rejected: unparseable date (first at ") && $0.hasSuffix("export.xml:5:2)") })
        #expect(warnings.contains { $0.contains("unparseable value") && $0.hasSuffix(":6:2)") })
        #expect(warnings.contains { $0.contains("ends before it starts") })
        #expect(warnings.contains { $0.contains("date out of range") })
        #expect(!warnings.joined().contains("NaN"))
    }

    @Test func aTruncatedExportCommitsNothingAndNamesTheFileAndPlace() throws {
        let t = try ImportTestVault()
        let good = t.write("good.xml", export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500")))
        let full = export(stepRecord("2024-01-02 10:00:00 +0100", "2024-01-02 10:10:00 +0100", "500") + "\n" + stepRecord("2024-01-02 11:00:00 +0100", "2024-01-02 11:10:00 +0100", "9"))
        let truncated = t.write("truncated.xml", String(full.prefix(full.count - 40)))
        let before = try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log"))
        #expect { _ = try t.vault.importFiles([good, truncated]) } throws: { "\($0)" == truncated + ":5:2: not well-formed XML: file ends inside markup (truncated?); nothing was imported" }
        do {
            _ = try t.vault.importFiles([good, truncated])
        } catch let error as ImportError {
            guard case .notWellFormed(let path, let location, _) = error else { Issue.record("\(error)"); return }
            #expect(path == truncated)
            // Where the unfinished element starts.
            #expect(location == SourceLocation(line: 5, column: 2))
        }
        // The good file before it is not kept either: a failed command changes nothing.
        #expect(try Data(contentsOf: URL(fileURLWithPath: t.path + "/events.log")) == before)
        #expect(try t.samples().isEmpty)
        // And the vault still takes the good file afterwards.
        #expect(try t.vault.importFiles([good]).added == 1)
    }

    @Test func filesThatAreNotExportsAreRefusedClearly() throws {
        let t = try ImportTestVault()
        let cases: [(String, String, expected: String)] = [
            ("empty.xml", "", ": not an Apple Health export: the file is empty"),
            ("other.xml", "<gpx version=\"1.1\"><trk/></gpx>",
             ": every one of its 1 entries was refused, so nothing of the import was kept: 1 track rejected: no point with a position and a time"),
            ("mismatch.xml", "<HealthData><Record type=\"x\"></HealthData>", ":1:30: not well-formed XML: end tag does not match the open element; nothing was imported"),
            ("notes.txt", "just some notes", ": unknown format (expected an Apple Health export.zip or export.xml, companion JSON or CSV)"),
        ]
        for (name, text, expected) in cases {
            let file = t.write(name, text)
            #expect { _ = try t.vault.importFiles([file]) } throws: { "\($0)" == file + expected }
        }
        #expect(throws: ImportError.unreadable(path: t.dir.path + "/missing.zip", reason: "no such file")) {
            _ = try t.vault.importFiles([t.dir.path + "/missing.zip"])
        }
        #expect(try t.dataEvents().isEmpty)
    }

    @Test func aLocalizedExportNameInAZipIsFoundAndNoiseIsSkipped() throws {
        let t = try ImportTestVault()
        let body = export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500"))
        let zip = try t.zip("exportar.zip", [
            ("__MACOSX/apple_health_export/._exportar.xml", "junk"),
            ("apple_health_export/.DS_Store", "junk"),
            ("apple_health_export/export_cda.xml", "<ClinicalDocument/>"),
            ("apple_health_export/exportar.xml", body),
        ])
        let report = try t.vault.importFiles([zip])
        #expect(report.added == 1 && report.files[0].format == "apple-health-zip")
    }

    @Test func aRouteFileTheZipLacksIsACountedWarning() throws {
        let t = try ImportTestVault()
        let workout = """
         <Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="30" durationUnit="min" sourceName="Watch" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:30:00 +0100">
          <WorkoutRoute sourceName="Watch" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:30:00 +0100">
           <FileReference path="/workout-routes/route_missing.gpx"/>
          </WorkoutRoute>
         </Workout>
        """
        let zip = try t.zip("export.zip", [("apple_health_export/export.xml", export(workout))])
        let report = try t.vault.importFiles([zip])
        #expect(report.added == 1)
        #expect(report.files[0].warnings == ["1 route file(s) named by workouts are missing from the zip"])
    }

    @Test func recordsRepeatedInsideACorrelationCountOnce() throws {
        let t = try ImportTestVault()
        func bp(_ type: String, _ value: String) -> String {
            "<Record type=\"HKQuantityTypeIdentifier\(type)\" sourceName=\"Cuff\" unit=\"mmHg\" startDate=\"2024-01-01 08:00:00 +0100\" endDate=\"2024-01-01 08:00:00 +0100\" value=\"\(value)\"/>"
        }
        let body = """
         \(bp("BloodPressureSystolic", "120"))
         \(bp("BloodPressureDiastolic", "80"))
         <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:00:00 +0100">
          <MetadataEntry key="HKWasUserEntered" value="1"/>
          \(bp("BloodPressureSystolic", "120"))
          \(bp("BloodPressureDiastolic", "80"))
         </Correlation>
        """
        let report = try t.vault.importFiles([t.write("export.xml", export(body))])
        #expect(report.added == 3 && report.duplicates == 0)
        #expect(try t.samples().count == 2)
    }

    @Test func localeUnitsAreNormalizedSoTheSameSampleIsTheSame() throws {
        let t = try ImportTestVault()
        func energy(_ unit: String, _ value: String) -> String {
            "<Record type=\"HKQuantityTypeIdentifierActiveEnergyBurned\" sourceName=\"Watch\" unit=\"\(unit)\" startDate=\"2024-01-01 08:00:00 +0100\" endDate=\"2024-01-01 08:01:00 +0100\" value=\"\(value)\"/>"
        }
        let first = try t.vault.importFiles([t.write("a.xml", export(energy("Cal", "12.5")))])
        let second = try t.vault.importFiles([t.write("b.xml", export(energy("kcal", "12.50")))])
        #expect(first.added == 1 && second.duplicates == 1)
        let third = try t.vault.importFiles([t.write("c.xml", export(energy("kJ", "52.3")))])
        #expect(third.added == 1)
        let values = try t.samples().map(\.value)
        #expect(values[0] == .quantity(DecimalValue(mantissa: 125, scale: 1), unit: "kcal"))
        if case .quantity(let v, "kcal") = values[1] { #expect(abs(v.double - 12.5) < 0.001) } else { Issue.record("kJ not converted") }
        let distance = "<Record type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" sourceName=\"Watch\" unit=\"km\" startDate=\"2024-01-01 08:00:00 +0100\" endDate=\"2024-01-01 08:01:00 +0100\" value=\"0.125\"/>"
        _ = try t.vault.importFiles([t.write("d.xml", export(distance))])
        #expect(try t.samples().last?.value == .quantity(DecimalValue(mantissa: 125, scale: 0), unit: "m"))
    }

    @Test func storedIdentitiesAgreeWithTheEncoder() throws {
        let t = try ImportTestVault()
        _ = try t.vault.importFiles([Fixtures.path("dogsheep/export.xml"), Fixtures.path("jshrake/export.zip")])
        let encoder = EventEncoder()
        for event in try t.dataEvents() {
            let (bytes, identity) = encoder.encode(event)
            _ = encoder.takeDefinitions()
            #expect(bytes.withUnsafeBytes { EventIdentity.span(of: $0) } == EventIdentity.Span(length: identity, legacy: false))
        }
    }

    /// The import's path for samples (`encode(sample:into:)`, one buffer reused for every
    /// sample) writes what the event's encoding writes, and the same definitions.
    @Test func theSamplePathEncodesAsTheEventDoes() throws {
        let t = try ImportTestVault()
        let generated = TemporaryDirectory()
        try SyntheticExport.writeFolder(at: generated.path, options: .init(days: 2, firstDay: (2024, 3, 30)))
        _ = try t.vault.importFiles([Fixtures.path("dogsheep/export.xml"), Fixtures.path("jshrake/export.zip"),
                                     generated.path + "/apple_health_export/export.xml"])
        let byEvent = EventEncoder(), bySample = EventEncoder()
        var buffer: [UInt8] = []
        var samples = 0
        for case .sample(let sample) in try t.dataEvents() {
            let (expected, _) = byEvent.encode(.sample(sample))
            bySample.encode(sample: sample, into: &buffer)
            #expect(buffer == expected)
            #expect(bySample.takeDefinitions() == byEvent.takeDefinitions())
            samples += 1
        }
        #expect(samples > 1_000)
    }
}

/// Findings of the importer review, each pinned.
@Suite struct ImportReviewTests {
    @Test func anOffsetBeyondFourteenHoursIsRejectedAndTheVaultStaysReadable() throws {
        let t = try ImportTestVault()
        let file = t.write("bad.csv", "type,start,end,value\nsteps,2025-08-06T08:00:00+99:00,2025-08-06T09:00:00+99:00,38\nsteps,2025-08-06T08:00:00+02:00,2025-08-06T09:00:00+02:00,38\n")
        let report = try t.vault.importFiles([file])
        #expect(report.added == 1 && report.rejected == 1)
        #expect(try Vault.verify(at: t.path, passphrase: passphrase("p")).isOK)
        #expect(try t.samples().count == 1)
    }

    @Test func absurdRouteValuesAreDroppedNotTrapped() throws {
        let t = try ImportTestVault()
        let workout = """
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:30:00 +0100">
          <WorkoutRoute sourceName="Watch">
           <Location date="2024-01-01 10:00:00 +0100" latitude="52.5" longitude="13.4" altitude="1e20" speed="-9e15" course="400" horizontalAccuracy="3"/>
           <Location date="2024-01-01 10:00:05 +0100" latitude="52.5001" longitude="13.4001" altitude="-9e15"/>
          </WorkoutRoute>
         </Workout>
        """
        _ = try t.vault.importFiles([t.write("export.xml", export(workout))])
        let routes = try t.dataEvents().compactMap { if case .route(let r) = $0 { r } else { nil } }
        #expect(routes.count == 1 && routes[0].points.count == 2)
        #expect(routes[0].points[0].altitude == nil && routes[0].points[0].speed == nil && routes[0].points[0].course == nil)
        #expect(routes[0].points[0].horizontalAccuracy == 3)
    }

    @Test func damagedEndTagsDoNotEchoTheirBytes() throws {
        let t = try ImportTestVault()
        let file = t.write("route.xml", "<HealthData>\n <Record type=\"x\"></Recor lat=\"37.77\" lon=\"-122.41\">\n</HealthData>\n")
        do {
            _ = try t.vault.importFiles([file])
            Issue.record("a mismatched end tag was accepted")
        } catch {
            #expect(!"\(error)".contains("37.77") && "\(error)".contains(":2:"))
        }
    }

    @Test func aByteOrderMarkIsNotAnError() throws {
        let t = try ImportTestVault()
        let xml = "\u{FEFF}" + export(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500"))
        #expect(try t.vault.importFiles([t.write("bom.xml", xml)]).added == 1)
        let csv = t.write("bom.csv", "\u{FEFF}type,start,end,value\nsteps,2025-08-06 08:00,2025-08-06 09:00,38\n")
        #expect(try t.vault.importFiles([csv]).added == 1)
    }
}

/// The second half of the importer review's findings.
@Suite struct ImportLimitsTests {
    @Test func aRecordWithTooManyChildrenIsRejectedAloneWithItsPlace() throws {
        let t = try ImportTestVault()
        let beats = String(repeating: "<InstantaneousBeatsPerMinute bpm=\"60\" time=\"1:00:00.00 PM\"/>", count: ElementLimits.beats + 1)
        let body = """
         <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Watch" unit="ms" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:01:00 +0100" value="40">
          <HeartRateVariabilityMetadataList>\(beats)</HeartRateVariabilityMetadataList>
         </Record>
        \(stepRecord("2024-01-01 10:00:00 +0100", "2024-01-01 10:10:00 +0100", "500"))
        """
        let report = try t.vault.importFiles([t.write("export.xml", export(body))])
        #expect(report.added == 1 && report.rejected == 1)
        #expect(report.files[0].warnings.contains { $0.contains("too many child elements (first at ") && !$0.contains(":0:0)") })
    }

    @Test func anUnclosedQuoteOrEndlessRowInACSVIsRefusedNotBuffered() throws {
        let t = try ImportTestVault()
        let quote = t.write("quote.csv", "type,start,end,value\n\"" + String(repeating: "x", count: (1 << 20) + 10))
        #expect(throws: ImportError.notWellFormed(path: quote, location: SourceLocation(line: 2, column: 1),
                                                  message: "a field longer than 1 MiB (an unclosed quote?)")) {
            _ = try t.vault.importFiles([quote])
        }
        let commas = t.write("commas.csv", "type,start,end,value\n" + String(repeating: ",", count: 2000))
        #expect(throws: ImportError.notWellFormed(path: commas, location: SourceLocation(line: 2, column: 1),
                                                  message: "more than 1000 fields in a row")) {
            _ = try t.vault.importFiles([commas])
        }
    }

    @Test func referencesInUnitsAndValuesAreDecodedNotMisread() throws {
        let t = try ImportTestVault()
        let body = """
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count&#47;min" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:00:00 +0100" value="&#55;2"/>
         <Record type="HKCategoryTypeIdentifierMindfulSession" sourceName="Watch" startDate="2024-01-01 11:00:00 +0100" endDate="2024-01-01 11:10:00 +0100" value="Calm &amp; quiet"/>
        """
        let report = try t.vault.importFiles([t.write("export.xml", export(body))])
        #expect(report.added == 2 && report.rejected == 0)
        let samples = try t.samples()
        #expect(samples[0].value == .quantity(DecimalValue(mantissa: 72, scale: 0), unit: "count/min"))
        #expect(samples[1].value == .category("Calm & quiet"))
    }

    @Test func badRoutePointsAreAWarningAndABadNestedRecordCountsOnce() throws {
        let t = try ImportTestVault()
        let bad = "<Record type=\"HKQuantityTypeIdentifierBloodPressureSystolic\" sourceName=\"Cuff\" unit=\"mmHg\" startDate=\"2024-01-01 08:00:00 +0100\" endDate=\"2024-01-01 08:00:00 +0100\" value=\"high\"/>"
        let body = """
         \(bad)
         <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:00:00 +0100">
          \(bad)
         </Correlation>
         <Workout workoutActivityType="HKWorkoutActivityTypeWalking" sourceName="Watch" startDate="2024-01-01 10:00:00 +0100" endDate="2024-01-01 10:30:00 +0100">
          <WorkoutRoute sourceName="Watch"><Location date="never" latitude="1" longitude="2"/><Location date="2024-01-01 10:00:00 +0100" latitude="52.5" longitude="13.4"/></WorkoutRoute>
         </Workout>
         <ActivitySummary dateComponents="2024-01-01" activeEnergyBurned="lots" activeEnergyBurnedUnit="kcal"/>
        """
        let report = try t.vault.importFiles([t.write("export.xml", export(body))])
        // The systolic record once, the summary with an unreadable number; the correlation, the
        // workout and its one good point are kept.
        #expect(report.rejected == 2 && report.added == 3)
        #expect(report.files[0].warnings.contains("1 route point(s) without a readable position or time skipped"))
    }

    @Test func uniqueMetadataValuesDoNotGrowTheStringTable() throws {
        let t = try ImportTestVault()
        let records = (0..<200).map { i in
            "<Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"iPhone\" unit=\"count\" startDate=\"2024-01-01 10:\(String(format: "%02d", i % 60)):00 +0100\" endDate=\"2024-01-01 11:00:00 +0100\" value=\"\(i)\"><MetadataEntry key=\"HKMetadataKeySyncIdentifier\" value=\"\(UUID().uuidString)\"/><MetadataEntry key=\"HKWasUserEntered\" value=\"0\"/></Record>"
        }.joined(separator: "\n")
        #expect(try t.vault.importFiles([t.write("export.xml", export(records))]).added == 200)
        var definitions = 0
        var reader = try t.vault.log.reader()
        while let frame = try reader.next() {
            frame.forEachEvent { _, bytes in if bytes[1] == EventCoding.Kind.defineString.rawValue { definitions += 1 } }
        }
        #expect(definitions < 20)
        #expect(try t.samples().allSatisfy { $0.metadata.count == 2 && $0.metadata[0].value.count == 36 })
    }
}
