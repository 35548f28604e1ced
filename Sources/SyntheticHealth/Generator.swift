import BinaryCoding
import Foundation
import HealthModel

/// The day-by-day simulation behind `SyntheticExport`.
struct Generator {
    let options: SyntheticExport.Options
    let root: String
    var rng: SplitMix64
    let zones: TimeZonePlan
    let firstDay: Int64
    var truth: [Int64: SyntheticExport.DayTruth] = [:]
    var routeFiles = 0

    struct Source {
        let name: String
        let version: String
        let device: String?
    }

    static let watch = Source(name: "Alex’s Apple Watch", version: "10.2",
                              device: "&lt;&lt;HKDevice: 0x3012772a0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,7, software:10.2&gt;")
    static let phone = Source(name: "Alex’s iPhone", version: "17.2",
                              device: "&lt;&lt;HKDevice: 0x3008d6850&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.2&gt;")
    static let scale = Source(name: "Withings", version: "6.3.1", device: nil)

    init(options: SyntheticExport.Options, root: String) {
        self.options = options
        self.root = root
        rng = SplitMix64(seed: options.seed)
        firstDay = TimeZonePlan.daysFromCivil(Int64(options.firstDay.year), Int64(options.firstDay.month), Int64(options.firstDay.day))
        zones = TimeZonePlan(trip: (firstDay + Int64(options.tripStart))..<(firstDay + Int64(options.tripStart) + 10))
    }

    mutating func random(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func random(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    mutating func run() throws -> SyntheticExport.Summary {
        let path = root + "/export.xml"
        let out = try ExportWriter(path: path)
        out.write(options.iOS16DTDBug ? Self.prologue : Self.prologue.replacingOccurrences(
            of: "  brand CDATA #IMPLIED\n<!ELEMENT RightEye", with: "  brand CDATA #IMPLIED\n>\n<!ELEMENT RightEye"))
        out.write("<HealthData locale=\"de_DE\">\n <ExportDate value=\"\(ExportWriter.date(zones.instant(day: firstDay + Int64(options.days), secondOfDay: 36_000), 3600))\"/>\n")
        out.write(" <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1988-04-12\" HKCharacteristicTypeIdentifierBiologicalSex=\"HKBiologicalSexFemale\" HKCharacteristicTypeIdentifierBloodType=\"HKBloodTypeNotSet\" HKCharacteristicTypeIdentifierFitzpatrickSkinType=\"HKFitzpatrickSkinTypeNotSet\" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse=\"None\"/>\n")
        out.countRecord()
        var workouts: [String] = []
        for index in 0..<options.days {
            let day = firstDay + Int64(index)
            simulate(day: day, index: index, out: out, workouts: &workouts)
        }
        // Apple writes workouts and summaries after the records.
        for w in workouts {
            out.write(w)
            out.countRecord()
        }
        for index in 0..<options.days {
            let day = firstDay + Int64(index)
            let t = truth[day] ?? SyntheticExport.DayTruth()
            out.write(" <ActivitySummary dateComponents=\"\(ExportWriter.day(day))\" activeEnergyBurned=\"\(String(format: "%.3f", t.activeEnergy))\" activeEnergyBurnedGoal=\"\(t.moveGoal)\" activeEnergyBurnedUnit=\"kcal\" appleMoveTime=\"0\" appleMoveTimeGoal=\"0\" appleExerciseTime=\"\(t.exerciseMinutes)\" appleExerciseTimeGoal=\"30\" appleStandHours=\"\(t.standHours)\" appleStandHoursGoal=\"12\"/>\n")
            out.countRecord()
        }
        out.write("</HealthData>\n")
        try out.close()
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        return SyntheticExport.Summary(records: out.records, routeFiles: routeFiles, days: truth, xmlBytes: size)
    }

    // MARK: One day

    mutating func simulate(day: Int64, index: Int, out: ExportWriter, workouts: inout [String]) {
        var t = SyntheticExport.DayTruth()
        t.moveGoal = index < options.days / 2 ? 450 : 550
        let wake = 7 * 3600 + random(-1800...1800)
        let bedtime = 23 * 3600 + random(-1800...1800)
        // The Watch charges from shortly after waking for an hour: the commute falls in it.
        let chargeStart = wake + 600, chargeEnd = wake + 600 + 3600
        func worn(_ s: Int) -> Bool { s >= wake && s < bedtime && !(s >= chargeStart && s < chargeEnd) }

        sleep(day: day, wake: wake, out: out, truth: &t)

        // Walking bouts (local seconds, minutes, phone carried?).
        var bouts: [(start: Int, minutes: Int, phone: Bool)] = [
            (chargeStart + 900, 20, true),             // commute, Watch on the charger
            (12 * 3600 + 1800, random(15...25), true),  // lunch walk
            (18 * 3600, random(20...30), true),         // walk home
            (15 * 3600, 8, false),                      // office walk, phone on the desk
        ]
        var s = 9 * 3600
        while s < 21 * 3600 {
            s += random(1800...4200)
            if !bouts.contains(where: { abs($0.start - s) < 1800 }) { bouts.append((s, random(2...5), true)) }
        }
        bouts.sort { $0.start < $1.start }
        var walkingMinutes = Set<Int>()
        for bout in bouts where bout.start + bout.minutes * 60 < bedtime {
            let watchOn = worn(bout.start) && worn(bout.start + bout.minutes * 60 - 1)
            let cadence = bout.minutes >= 8 ? random(100...118) : random(70...95)
            var phoneSteps = 0, watchSteps = 0
            for m in 0..<bout.minutes {
                walkingMinutes.insert(bout.start / 60 + m)
                let minuteStart = bout.start + m * 60
                let steps = cadence + random(-6...6)
                if watchOn {
                    let ws = steps
                    watchSteps += ws
                    quantity(out, "StepCount", Self.watch, day, minuteStart, minuteStart + 60, "count", "\(ws)")
                    quantity(out, "DistanceWalkingRunning", Self.watch, day, minuteStart, minuteStart + 60, "km", String(format: "%.5f", Double(ws) * 0.00076))
                    let kcal = Double(ws) * 0.045 + random(0.0...0.4)
                    t.activeEnergy += (kcal * 1000).rounded() / 1000
                    quantity(out, "ActiveEnergyBurned", Self.watch, day, minuteStart, minuteStart + 60, "kcal", String(format: "%.3f", kcal))
                    if cadence >= 100 {
                        quantity(out, "AppleExerciseTime", Self.watch, day, minuteStart, minuteStart + 60, "min", "1")
                        t.exerciseMinutes += 1
                    }
                }
                if bout.phone { phoneSteps += Int((Double(steps) * random(0.93...1.02)).rounded()) }
            }
            if bout.phone {
                // The phone writes coarser samples covering the same walk.
                var m = 0
                var remaining = phoneSteps
                while m < bout.minutes {
                    let span = min(random(3...7), bout.minutes - m)
                    let part = m + span >= bout.minutes ? remaining : phoneSteps * span / bout.minutes
                    remaining -= part
                    let a = bout.start + m * 60, b = a + span * 60
                    quantity(out, "StepCount", Self.phone, day, a, b, "count", "\(part)")
                    quantity(out, "DistanceWalkingRunning", Self.phone, day, a, b, "km", String(format: "%.5f", Double(part) * 0.00074))
                    m += span
                }
            }
            t.steps += watchOn ? watchSteps : phoneSteps
            if bout.minutes >= 8 && chance(0.3) {
                let a = bout.start + 120
                quantity(out, "FlightsClimbed", Self.phone, day, a, a + 60, "count", "2")
                if watchOn { quantity(out, "FlightsClimbed", Self.watch, day, a, a + 60, "count", "2") }
            }
        }

        // Watch background: heart rate every three minutes, energy every two, basal every quarter hour.
        var second = wake
        while second < bedtime {
            if worn(second) {
                let minute = second / 60
                if second % 180 < 60 {
                    let bpm = walkingMinutes.contains(minute) ? random(95...125) : random(58...88)
                    heartRate(out, day, second, bpm)
                }
                if !walkingMinutes.contains(minute) && second % 120 < 60 {
                    let kcal = random(0.2...1.6)
                    t.activeEnergy += (kcal * 1000).rounded() / 1000
                    quantity(out, "ActiveEnergyBurned", Self.watch, day, second, second + 120, "kcal", String(format: "%.3f", kcal))
                }
                if second % 900 < 60 {
                    quantity(out, "BasalEnergyBurned", Self.watch, day, second, second + 900, "kcal", String(format: "%.3f", random(15.0...17.5)))
                }
            }
            second += 60
        }

        // Stand hours: one record per worn hour, stood or idle; stand minutes when stood.
        for hour in (wake / 3600 + 1)..<(bedtime / 3600) {
            let start = hour * 3600
            guard worn(start) && worn(start + 3599) else { continue }
            let stood = chance(0.78)
            category(out, "AppleStandHour", Self.watch, day, start, start + 3600, stood ? "HKCategoryValueAppleStandHourStood" : "HKCategoryValueAppleStandHourIdle")
            if stood {
                t.standHours += 1
                let at = start + random(60...2400)
                quantity(out, "AppleStandTime", Self.watch, day, at, at + 120, "min", "2")
            }
        }

        // Daily heart figures and HRV with beat lists.
        quantity(out, "RestingHeartRate", Self.watch, day, wake + 3 * 3600, wake + 3 * 3600, "count/min", "\(random(52...62))")
        quantity(out, "WalkingHeartRateAverage", Self.watch, day, 12 * 3600, 12 * 3600, "count/min", "\(random(95...110))")
        for k in 0..<3 {
            let at = [9, 14, 20][k] * 3600 + random(0...1800)
            if worn(at) { hrv(out, day, at) }
        }
        if index % 7 == 3 {
            quantity(out, "BodyMass", Self.scale, day, wake + 300, wake + 300, "kg", String(format: "%.1f", 68 + sin(Double(index) / 40) * 2))
        }
        if index % 3 == 1 {
            workouts.append(run(day: day, at: 19 * 3600 + 1800, out: out, truth: &t))
        }
        truth[day] = t
    }

    // MARK: Pieces

    mutating func sleep(day: Int64, wake: Int, out: ExportWriter, truth t: inout SyntheticExport.DayTruth) {
        // From the previous evening to this morning: crosses midnight.
        let start = zones.instant(day: day - 1, secondOfDay: Int64(23 * 3600 + random(-1200...1200)))
        let end = zones.instant(day: day, secondOfDay: Int64(wake - 600))
        write(out, "HKCategoryTypeIdentifierSleepAnalysis", Self.phone, start, end, unit: nil, value: "HKCategoryValueSleepAnalysisInBed")
        t.sleepInBed += Double(end - start) / 60
        var s = start + 600
        let stages = ["HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepDeep",
                      "HKCategoryValueSleepAnalysisAsleepCore", "HKCategoryValueSleepAnalysisAsleepREM", "HKCategoryValueSleepAnalysisAwake"]
        var i = 0
        while s < end - 1200 {
            let length = Int64(random(900...3600))
            let e = min(s + length, end)
            write(out, "HKCategoryTypeIdentifierSleepAnalysis", Self.watch, s, e, unit: nil, value: stages[i % stages.count])
            let minutes = Double(e - s) / 60
            switch i % stages.count {
            case 0, 2: t.sleepCore += minutes
            case 1: t.sleepDeep += minutes
            case 3: t.sleepREM += minutes
            default: t.sleepAwake += minutes
            }
            s = e
            i += 1
        }
    }

    mutating func heartRate(_ out: ExportWriter, _ day: Int64, _ second: Int, _ bpm: Int) {
        let at = zones.instant(day: day, secondOfDay: Int64(second))
        write(out, "HKQuantityTypeIdentifierHeartRate", Self.watch, at, at, unit: "count/min", value: "\(bpm)",
              children: "  <MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"\(bpm > 100 ? 2 : 0)\"/>\n")
    }

    mutating func hrv(_ out: ExportWriter, _ day: Int64, _ second: Int) {
        let start = zones.instant(day: day, secondOfDay: Int64(second))
        var beats = "  <HeartRateVariabilityMetadataList>\n"
        var clock = second
        for _ in 0..<30 {
            let bpm = random(55...75)
            clock += 1
            let h = clock / 3600 % 24, m = clock / 60 % 60, s = clock % 60
            let hh = h % 12 == 0 ? 12 : h % 12
            beats += "   <InstantaneousBeatsPerMinute bpm=\"\(bpm)\" time=\"\(hh):\(m < 10 ? "0" : "")\(m):\(s < 10 ? "0" : "")\(s).\(random(10...99)) \(h < 12 ? "AM" : "PM")\"/>\n"
        }
        beats += "  </HeartRateVariabilityMetadataList>\n"
        write(out, "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", Self.watch, start, start + 60, unit: "ms",
              value: String(format: "%.4f", random(25.0...70.0)), children: beats)
    }

    /// A sample from a local start time lasting `end - start` seconds (so that a DST switch inside
    /// the day cannot make it end before it starts).
    mutating func quantity(_ out: ExportWriter, _ type: String, _ source: Source, _ day: Int64, _ start: Int, _ end: Int, _ unit: String, _ value: String) {
        let at = zones.instant(day: day, secondOfDay: Int64(start))
        write(out, "HKQuantityTypeIdentifier" + type, source, at, at + Int64(end - start), unit: unit, value: value)
    }

    mutating func category(_ out: ExportWriter, _ type: String, _ source: Source, _ day: Int64, _ start: Int, _ end: Int, _ value: String) {
        let at = zones.instant(day: day, secondOfDay: Int64(start))
        write(out, "HKCategoryTypeIdentifier" + type, source, at, at + Int64(end - start), unit: nil, value: value)
    }

    func write(_ out: ExportWriter, _ type: String, _ source: Source, _ start: Int64, _ end: Int64, unit: String?, value: String, children: String? = nil) {
        let offset = zones.offset(at: start)
        var line = " <Record type=\"\(type)\" sourceName=\"\(source.name)\" sourceVersion=\"\(source.version)\""
        if let device = source.device { line += " device=\"\(device)\"" }
        if let unit { line += " unit=\"\(unit)\"" }
        let endText = ExportWriter.date(end, zones.offset(at: end))
        line += " creationDate=\"\(endText)\" startDate=\"\(ExportWriter.date(start, offset))\" endDate=\"\(endText)\" value=\"\(value)\""
        if let children {
            out.write(line + ">\n" + children + " </Record>\n")
        } else {
            out.write(line + "/>\n")
        }
        out.countRecord()
    }

    /// A 30-minute run with its samples, statistics, events and a GPX route; returns the Workout element.
    mutating func run(day: Int64, at second: Int, out: ExportWriter, truth t: inout SyntheticExport.DayTruth) -> String {
        let minutes = 30
        let start = zones.instant(day: day, secondOfDay: Int64(second))
        let end = start + Int64(minutes * 60)
        var kcalTotal = 0.0, meters = 0.0
        for m in 0..<minutes {
            let a = second + m * 60
            let kcal = random(9.0...12.0)
            let dist = random(160.0...190.0)
            kcalTotal += (kcal * 1000).rounded() / 1000
            meters += dist
            quantity(out, "ActiveEnergyBurned", Self.watch, day, a, a + 60, "kcal", String(format: "%.3f", kcal))
            quantity(out, "DistanceWalkingRunning", Self.watch, day, a, a + 60, "km", String(format: "%.5f", dist / 1000))
            quantity(out, "AppleExerciseTime", Self.watch, day, a, a + 60, "min", "1")
            heartRate(out, day, a + 30, random(140...170))
        }
        t.activeEnergy += kcalTotal
        t.exerciseMinutes += minutes
        t.workouts += 1
        t.workoutMinutes += minutes
        t.workoutEnergy += Double(String(format: "%.3f", kcalTotal))!
        t.workoutDistance += Double(String(format: "%.4f", meters / 1000))! * 1000
        let offset = zones.offset(at: start)
        let fileName = "route_\(ExportWriter.day(day))_\(second / 3600).\(second / 60 % 60)pm.gpx"
        try? writeRoute(fileName: fileName, start: start, seconds: minutes * 60)
        routeFiles += 1
        let s = ExportWriter.date(start, offset), e = ExportWriter.date(end, zones.offset(at: end))
        return """
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="\(minutes)" durationUnit="min" sourceName="\(Self.watch.name)" sourceVersion="\(Self.watch.version)" device="\(Self.watch.device!)" creationDate="\(e)" startDate="\(s)" endDate="\(e)">
          <MetadataEntry key="HKIndoorWorkout" value="0"/>
          <MetadataEntry key="HKTimeZone" value="\(offset == -4 * 3600 ? "America/New_York" : "Europe/Berlin")"/>
          <WorkoutEvent type="HKWorkoutEventTypeSegment" date="\(s)" duration="15" durationUnit="min"/>
          <WorkoutEvent type="HKWorkoutEventTypeSegment" date="\(ExportWriter.date(start + 900, offset))" duration="15" durationUnit="min"/>
          <WorkoutStatistics type="HKQuantityTypeIdentifierActiveEnergyBurned" startDate="\(s)" endDate="\(e)" sum="\(String(format: "%.3f", kcalTotal))" unit="kcal"/>
          <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceWalkingRunning" startDate="\(s)" endDate="\(e)" sum="\(String(format: "%.4f", meters / 1000))" unit="km"/>
          <WorkoutRoute sourceName="\(Self.watch.name)" sourceVersion="\(Self.watch.version)" creationDate="\(e)" startDate="\(s)" endDate="\(e)">
           <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>
           <FileReference path="/workout-routes/\(fileName)"/>
          </WorkoutRoute>
         </Workout>

        """
    }

    mutating func writeRoute(fileName: String, start: Int64, seconds: Int) throws {
        var gpx = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">
         <trk><name>Run</name><trkseg>

        """
        var lat = 52.52 + random(-0.01...0.01), lon = 13.405 + random(-0.01...0.01), ele = 34.0
        var s = 0
        while s < seconds {
            lat += random(-0.00005...0.00008)
            lon += random(-0.00005...0.00008)
            ele += random(-0.3...0.3)
            gpx += "  <trkpt lon=\"\(String(format: "%.6f", lon))\" lat=\"\(String(format: "%.6f", lat))\"><ele>\(String(format: "%.6f", ele))</ele><time>\(ExportWriter.isoDate(start + Int64(s)))</time><extensions><speed>\(String(format: "%.6f", random(2.5...3.5)))</speed><course>\(String(format: "%.6f", random(0.0...359.0)))</course><hAcc>\(String(format: "%.6f", random(1.0...5.0)))</hAcc><vAcc>\(String(format: "%.6f", random(1.0...4.0)))</vAcc></extensions></trkpt>\n"
            s += 5
        }
        gpx += " </trkseg></trk>\n</gpx>\n"
        try Data(gpx.utf8).write(to: URL(fileURLWithPath: root + "/workout-routes/" + fileName))
    }

    /// The DTD of a version 12 export, with the iOS 16 bug: `<!ATTLIST VisionPrescription` never closed.
    static let prologue = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE HealthData [
    <!-- HealthKit Export Version: 13 -->
    <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
    <!ATTLIST HealthData
      locale CDATA #REQUIRED
    >
    <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
    <!ATTLIST Record
      type CDATA #REQUIRED
      unit CDATA #IMPLIED
      value CDATA #IMPLIED
      sourceName CDATA #REQUIRED
      sourceVersion CDATA #IMPLIED
      device CDATA #IMPLIED
      creationDate CDATA #IMPLIED
      startDate CDATA #REQUIRED
      endDate CDATA #REQUIRED
    >
    <!ELEMENT VisionPrescription ((RightEye|LeftEye|Attachment|MetadataEntry)*)>
    <!ATTLIST VisionPrescription
      type CDATA #REQUIRED
      dateIssued CDATA #REQUIRED
      expirationDate CDATA #IMPLIED
      brand CDATA #IMPLIED
    <!ELEMENT RightEye EMPTY>
    ]>

    """
}
