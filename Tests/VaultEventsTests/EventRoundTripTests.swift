import Foundation
import HealthModel
import Testing
import VaultEvents

/// One event of every kind, every optional part present somewhere: each encodes, decodes to
/// itself, and no strict prefix of its bytes decodes to anything but a "truncated" refusal.
@Suite struct EventRoundTripTests {
    static let date = Date(timeIntervalSince1970: 1_732_320_000.123)
    static let start = HealthTimestamp(seconds: 1_710_111_300, utcOffset: 3_600)
    static let end = HealthTimestamp(seconds: 1_710_111_900, utcOffset: 3_600)
    static let watch = HealthSource(name: "Anna’s Apple Watch", version: "10.4",
                                    device: HealthDevice(name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardware: "Watch6,1", software: "10.4"))
    static let phone = HealthSource(name: "Phone")
    static let metadata = [MetadataEntry(key: "HKMetadataKeySyncIdentifier", value: String(repeating: "7E1F", count: 9)),
                           MetadataEntry(key: "HKWasUserEntered", value: "1")]

    static let steps = HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: phone, start: start, end: end,
                                    value: .quantity(DecimalValue(mantissa: 1_234, scale: 0), unit: "count"))
    static let pushUps = Exercise(name: "push-ups", bodyParts: [.chest, .arms], motion: .strength)

    /// Every kind the log holds (definitions come from the encoder itself).
    static let events: [VaultEvent] = [
        .vaultCreated(at: date, kdf: "moderate"),
        .passphraseChanged(at: Date(timeIntervalSince1970: -86_400.5)),
        .sample(steps),
        .sample(HealthSample(type: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", source: watch, start: start,
                             end: HealthTimestamp(seconds: 1_710_111_360, utcOffset: 7_200),
                             value: .quantity(DecimalValue(double: 41.37), unit: "ms"), metadata: metadata,
                             beats: [HeartbeatEntry(bpm: DecimalValue(mantissa: 612, scale: 1), time: "10:55:01.25")],
                             creationDate: HealthTimestamp(seconds: 1_710_111_370, utcOffset: -18_000))),
        .sample(HealthSample(type: "HKCategoryTypeIdentifierSleepAnalysis", source: watch, start: start, end: end,
                             value: .category("HKCategoryValueSleepAnalysisAsleepREM"))),
        .sample(HealthSample(type: "HKCategoryTypeIdentifierMindfulSession", source: phone, start: start, end: end, value: .none)),
        .workout(Workout(activityType: "HKWorkoutActivityTypeRunning", source: watch, start: start, end: end,
                         duration: DecimalValue(mantissa: 10, scale: 0), totalDistance: DecimalValue(mantissa: 2_105, scale: 3),
                         totalEnergy: DecimalValue(mantissa: 1_503, scale: 1), metadata: metadata,
                         events: [WorkoutEvent(type: "HKWorkoutEventTypePause", date: start, duration: DecimalValue(mantissa: 5, scale: 1))],
                         statistics: [WorkoutStatistic(type: "HKQuantityTypeIdentifierHeartRate", start: start, end: end,
                                                       average: DecimalValue(mantissa: 151, scale: 0), minimum: DecimalValue(mantissa: 98, scale: 0),
                                                       maximum: DecimalValue(mantissa: 178, scale: 0), unit: "count/min")],
                         routes: [WorkoutRouteReference(source: watch, start: start, end: end, filePath: "/workout-routes/route_1.gpx",
                                                        metadata: [MetadataEntry(key: "HKMetadataKeySyncVersion", value: "2")])])),
        .route(WorkoutRoute(workoutStart: start, filePath: "/workout-routes/route_1.gpx", points: [
            RoutePoint(time: 1_710_111_300, latitude: 47.3769, longitude: 8.5417, altitude: 408.123, speed: 2.5, course: 181.25,
                       horizontalAccuracy: 3.5, verticalAccuracy: 2.25),
            RoutePoint(time: 1_710_111_301, latitude: 47.37695, longitude: 8.54175),
        ])),
        .activitySummary(ActivitySummary(day: 19_797, activeEnergy: DecimalValue(mantissa: 4_512, scale: 1), activeEnergyGoal: DecimalValue(mantissa: 500, scale: 0),
                                         exerciseTime: DecimalValue(mantissa: 31, scale: 0), exerciseTimeGoal: DecimalValue(mantissa: 30, scale: 0),
                                         standHours: DecimalValue(mantissa: 11, scale: 0), standHoursGoal: DecimalValue(mantissa: 12, scale: 0))),
        .characteristics([MetadataEntry(key: "HKCharacteristicTypeIdentifierBiologicalSex", value: "HKBiologicalSexFemale")]),
        .correlation(Correlation(type: "HKCorrelationTypeIdentifierBloodPressure", source: phone, start: start, end: start, metadata: metadata)),
        .correlation(Correlation(type: "HKCorrelationTypeIdentifierFood", source: phone, start: start, end: end, metadata: metadata,
                                 creationDate: HealthTimestamp(seconds: 1_710_111_905, utcOffset: 3_600))),
        .genericRecord(GenericRecord(element: "Audiogram", attributes: [MetadataEntry(key: "type", value: "HKDataTypeIdentifierAudiogram")])),
        .genericRecord(GenericRecord(element: "ClinicalRecord", attributes: [
            MetadataEntry(key: "type", value: "HKClinicalTypeIdentifierLabResultRecord"),
            MetadataEntry(key: GenericRecord.resourceKey, value: #"{"resourceType":"Observation","status":"final"}"#),
        ])),
        .electrocardiogram(Electrocardiogram(recorded: start, fields: [MetadataEntry(key: "Classification", value: "Sinus Rhythm")],
                                             millivoltages: [0, 12, -7, 1_500, -1_500], unit: "µV", sampleRate: 512)),
        .importRecorded(at: date, ImportRecord(file: "export.zip", format: "apple-health", added: 12_000, duplicates: 3, rejected: 1)),
        .importRecorded(at: date, ImportRecord(file: "post", format: "companion", added: 1, duplicates: 0, rejected: 0, replaced: 2)),
        .goalSet(GoalSetting(at: date, ring: .exercise, value: DecimalValue(mantissa: 45, scale: 0), from: LocalDay(year: 2024, month: 3, day: 1))),
        .sourceOrderSet(at: date, [SourceKey(name: "Anna’s Apple Watch", deviceClass: .watch), SourceKey(name: "Phone", deviceClass: .phone)]),
        .recipientAdded(RecipientRecord(at: date, name: "study-a", publicKey: Array(0..<32))),
        .consentGranted(ConsentGrant(id: "00112233aabbccdd", at: date, recipient: "study-a", categories: [.activity, .heart],
                                     from: LocalDay(year: 2024, month: 1, day: 1), to: LocalDay(year: 2024, month: 12, day: 31),
                                     granularity: .hourly, expires: LocalDay(year: 2025, month: 6, day: 30), purpose: "sleep study")),
        .consentGranted(ConsentGrant(id: "8899aabbccddeeff", at: date, recipient: "study-b", categories: [.other], from: nil, to: nil,
                                     granularity: .raw, expires: nil, purpose: nil, otherTypes: ["HKQuantityTypeIdentifierUVExposure"])),
        .consentRevoked(ConsentRevocation(at: date, recipient: "study-a", categories: nil)),
        .consentRevoked(ConsentRevocation(at: date, recipient: "study-a", categories: [.heart])),
        .exportPerformed(ExportRecord(at: date, recipient: "study-a", consentIDs: ["00112233aabbccdd"], counts: ["activity": 10, "heart": 0],
                                      bundleHash: String(repeating: "ab", count: 32))),
        .identityRecorded(IdentityRecord(at: date, reason: .rotated, signingKey: Array(32..<64), encryptionKey: Array(64..<96))),
        .masterKeyRotated(at: date),
        .erased(ErasureRecord(at: date, eraseID: "e1", labels: ["heart/2024-03", "heart/2024-04"], events: 1_234)),
        .sampleSuperseded(SampleSupersession(replacedIndex: 77, replaced: steps)),
        .companionPaired(CompanionPairing(at: date, name: "Anna’s iPhone", tokenHash: Array(repeating: 0x5A, count: 32))),
        .companionRevoked(CompanionRevocation(at: date, name: "Anna’s iPhone")),
        .trackerDefined(TrackerDefinition(at: date, name: "NoAlc", levels: [TrackerLevel(name: "steady", value: DecimalValue(mantissa: 0, scale: 0)),
                                                                            TrackerLevel(name: "wild", value: DecimalValue(mantissa: 6, scale: 0))],
                                          success: ["steady"], dayStartsMinutes: 240, healthKitType: "HKQuantityTypeIdentifierNumberOfAlcoholicBeverages")),
        .trackerEntry(TrackerEntry(tracker: "NoAlc", level: "wild", value: DecimalValue(mantissa: 6, scale: 0), at: start,
                                   day: LocalDay(year: 2024, month: 3, day: 10), category: .trackers)),
        .tailCut(TailCutRecord(at: date, offset: 1 << 33, length: 4_100, digest: String(repeating: "0f", count: 32), keptAs: "events.log.torn.1")),
        .exerciseDefined(ExerciseDefinition(at: date, exercise: Exercise(name: "Wall sit", bodyParts: [.legs, .fullBody], motion: .mobility))),
        .practiceLogged(PracticeEntry(exercise: pushUps, repetitions: 20, seconds: 90, at: start)),
        .practiceLogged(PracticeEntry(exercise: pushUps, repetitions: 0, seconds: 0, at: start)),
        .practiceLogged(PracticeEntry(exercise: pushUps, repetitions: 12, seconds: nil, at: start)),
    ]

    /// A decoder fed the encoder's definitions as a log reader meets them, then the event.
    static func encodeAndDecode(_ events: [VaultEvent]) throws -> [(event: VaultEvent, bytes: [UInt8], decoded: VaultEvent?, decoder: EventDecoder)] {
        let encoder = EventEncoder(), decoder = EventDecoder()
        var index: UInt64 = 0
        return try events.map { event in
            let (bytes, _) = encoder.encode(event)
            for definition in encoder.takeDefinitions() {
                #expect(try definition.withUnsafeBytes { try decoder.decode($0, index: index) } == nil)
                index += 1
            }
            defer { index += 1 }
            return (event, bytes, try bytes.withUnsafeBytes { try decoder.decode($0, index: index) }, decoder)
        }
    }

    @Test func everyKindDecodesToItself() throws {
        let results = try Self.encodeAndDecode(Self.events)
        for result in results { #expect(result.decoded == result.event, "\(result.event.kind) \(result.bytes.prefix(2))") }
        // Every kind this build writes is among them: all but the two definitions and kind 11,
        // a correlation as older builds wrote it (EncodedEventTests decodes one).
        let kinds = Set(results.map { $0.bytes[1] })
        #expect(kinds == Set((1...32).map(UInt8.init)).subtracting([3, 4, 11]), "\(kinds.sorted())")
    }

    /// Truncated bytes are refused, whichever byte the cut falls after: except where the format
    /// ends in a part that older records lack (an import's `replaced`, a grant's `other` types),
    /// where the cut at that boundary reads as the older record would.
    @Test func everyStrictPrefixIsRefusedAsTruncated() throws {
        for result in try Self.encodeAndDecode(Self.events) {
            for cut in 0..<result.bytes.count {
                let prefix = Array(result.bytes.prefix(cut))
                do {
                    let decoded = try prefix.withUnsafeBytes { try result.decoder.decode($0, index: 7) }
                    switch (result.event, decoded) {
                    case (.importRecorded(_, var record), .importRecorded(_, let older)?) where record.replaced > 0:
                        record.replaced = 0
                        #expect(older == record, "cut at \(cut)")
                    case (.consentGranted(var grant), .consentGranted(let older)?) where grant.otherTypes != nil:
                        grant.otherTypes = nil
                        #expect(older == grant, "cut at \(cut)")
                    default:
                        Issue.record("\(result.event.kind) cut at \(cut) of \(result.bytes.count) decoded as \(String(describing: decoded))")
                    }
                } catch let error as UndecodableEvent {
                    #expect(error.index == 7 && error.reason.hasPrefix("truncated"), "\(result.event.kind) cut at \(cut): \(error)")
                }
            }
        }
        #expect(throws: UndecodableEvent(index: 3, reason: "unknown encoding version (written by a newer build?)")) {
            _ = try [UInt8]([9, 1]).withUnsafeBytes { try EventDecoder().decode($0, index: 3) }
        }
    }
}
