import Foundation
import Testing

@Suite(.timeLimit(.minutes(10))) struct VaultctlTests {
    let cli = CLIRunner()

    private func initVault(_ dir: TemporaryDirectory, passphrase: String = "correct horse battery") throws -> (vault: String, passFile: String) {
        let vault = dir.path + "/vault"
        let passFile = dir.passphraseFile("pass", passphrase)
        let result = try cli.run(["init", "--vault", vault, "--passphrase-file", passFile, "--kdf", "interactive"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        return (vault, passFile)
    }

    @Test func initThenVerifyPrintsOneJSONDocument() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try initVault(dir)
        let result = try cli.run(["verify", "--vault", vault, "--passphrase-file", pass, "--json"])
        #expect(result.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["ok"] as? Bool == true)
        #expect(json["frames"] as? Int == 1)
        #expect(json["events"] as? Int == 2)  // the vault's creation and its identity, one commit
        #expect((json["problems"] as? [String])?.isEmpty == true)
    }

    @Test func aWrongPassphraseSaysSoOnOneLineAndExitsNonZero() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try initVault(dir)
        let wrong = dir.passphraseFile("wrong", "Tr0ub4dor&3")
        let result = try cli.run(["verify", "--vault", vault, "--passphrase-file", wrong])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("wrong passphrase"))
        #expect(!result.stderr.contains("Tr0ub4dor"))
    }

    @Test func initRefusesAnExistingVault() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try initVault(dir)
        let before = try FileManager.default.contentsOfDirectory(atPath: vault).sorted()
        let keyslot = try Data(contentsOf: URL(fileURLWithPath: vault + "/keyslot"))
        let result = try cli.run(["init", "--vault", vault, "--passphrase-file", pass])
        #expect(result.status != 0)
        #expect(result.stderr.contains(vault))
        #expect(try FileManager.default.contentsOfDirectory(atPath: vault).sorted() == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault + "/keyslot")) == keyslot)
    }

    @Test func withoutAPassphraseSourceOrTerminalItSaysHowToGiveOne() throws {
        let dir = TemporaryDirectory()
        let result = try cli.run(["init", "--vault", dir.path + "/vault"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--passphrase-file"))
        #expect(result.stderr.contains("HEALTHVAULT_PASSPHRASE"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/vault/keyslot"))
    }

    @Test func environmentVariablesNameTheVaultAndThePassphrase() throws {
        let dir = TemporaryDirectory()
        var cli = CLIRunner()
        cli.environment = ["HEALTHVAULT_DIR": dir.path + "/envvault", "HEALTHVAULT_PASSPHRASE": "from the environment"]
        #expect(try cli.run(["init", "--kdf", "interactive"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.path + "/envvault/keyslot"))
        #expect(try cli.run(["verify"]).status == 0)
        cli.environment = ["XDG_DATA_HOME": dir.path + "/xdg", "HEALTHVAULT_PASSPHRASE": "xdg"]
        #expect(try cli.run(["init", "--kdf", "interactive"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: dir.path + "/xdg/healthvault/keyslot"))
    }

    @Test func passwdRetiresTheOldPassphrase() throws {
        let dir = TemporaryDirectory()
        let (vault, old) = try initVault(dir)
        let new = dir.passphraseFile("new", "a new passphrase")
        let changed = try cli.run(["passwd", "--vault", vault, "--passphrase-file", old, "--new-passphrase-file", new])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try cli.run(["verify", "--vault", vault, "--passphrase-file", old]).status != 0)
        let verified = try cli.run(["verify", "--vault", vault, "--passphrase-file", new, "--json"])
        #expect(verified.status == 0)
        #expect(verified.stdout.contains("\"events\":3"))
    }

    @Test func verifyNamesTheOffsetOfDamageAndExitsNonZero() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try initVault(dir)
        let new = dir.passphraseFile("new", "second")
        #expect(try cli.run(["passwd", "--vault", vault, "--passphrase-file", pass, "--new-passphrase-file", new]).status == 0)
        // Flip a byte inside the first frame's ciphertext (file header 32 + frame header 112).
        let logPath = vault + "/events.log"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logPath)))
        bytes[32 + 112 + 3] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: logPath))
        let result = try cli.run(["verify", "--vault", vault, "--passphrase-file", new, "--json"])
        #expect(result.status != 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["ok"] as? Bool == false)
        let problems = try #require(json["problems"] as? [String])
        #expect(problems.count == 1 && problems[0].contains("offset 32"))
    }

    @Test func demoRunsTheWholeFlow() throws {
        let result = try cli.run(["demo", "--days", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        for step in ["init", "generate", "import export.zip", "verify", "passwd", "old passphrase", "audit trail"] {
            #expect(result.stdout.contains(step))
        }
        #expect(result.stdout.contains("added 0, duplicates"))
        #expect(result.stdout.contains("refused: wrong passphrase"))
        // The report is the demo's to keep for the person (it says where); the test removes it.
        let wrote = try #require(result.stdout.range(of: #"wrote (/\S+-report\.html)"#, options: .regularExpression))
        let report = String(result.stdout[wrote].dropFirst("wrote ".count))
        #expect(FileManager.default.fileExists(atPath: report))
        try FileManager.default.removeItem(atPath: report)
    }

    /// The installed vaultctl links no generator: without healthvault-demo beside it (a vaultctl
    /// installed alone), `demo` says what it misses and how to get it, and writes nothing.
    @Test func demoWithoutItsGeneratorSaysWhatIsMissing() throws {
        let dir = TemporaryDirectory()
        let alone = dir.path + "/vaultctl"
        try FileManager.default.linkItem(atPath: CLIRunner.binary.path, toPath: alone)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: alone)
        process.arguments = ["demo", "--days", "1"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(stderr == "vaultctl: error: vaultctl demo generates its data with healthvault-demo, which is not beside vaultctl (\(dir.path)/healthvault-demo): `make demo` builds both\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["vaultctl"])
    }

    @Test func importPrintsTheSpecJSONAndNamesABrokenFileWithItsPlace() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try initVault(dir)
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/apple-health/jshrake/export.zip").path
        let result = try cli.run(["import", "--vault", vault, "--passphrase-file", pass, "--json", fixture])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["added"] as? Int == 13 && json["duplicates"] as? Int == 0 && json["rejected"] as? Int == 0)
        let files = try #require(json["files"] as? [[String: Any]])
        #expect(files.first?["format"] as? String == "apple-health-zip" && files.first?["warnings"] as? [String] == [])

        let broken = dir.path + "/broken.xml"
        try Data("<HealthData>\n <Record type=\"x\" sourceName=\"s\"\n".utf8).write(to: URL(fileURLWithPath: broken))
        let failed = try cli.run(["import", "--vault", vault, "--passphrase-file", pass, broken])
        #expect(failed.status != 0 && failed.stdout.isEmpty)
        #expect(failed.stderr.split(separator: "\n").count == 1)
        #expect(failed.stderr.contains("\(broken):2:2"))

        // With --json, a failure is one JSON document on stdout too (round 2 of the contract).
        let failedJSON = try cli.run(["import", "--vault", vault, "--passphrase-file", pass, "--json", broken])
        #expect(failedJSON.status != 0 && failedJSON.stderr.split(separator: "\n").count == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(failedJSON.stdout.utf8)) as? [String: String])
        #expect(document["file"] == broken && document["error"]?.contains("\(broken):2:2") == true)
    }
}

/// `types` and short names on the command line (issue 16).
@Suite(.timeLimit(.minutes(10))) struct TypesCommandTests {
    let cli = CLIRunner()

    /// A new vault holding the records of `xml`: its path and passphrase file.
    private func vaultWith(_ dir: TemporaryDirectory, _ xml: String) throws -> (String, String) {
        let vault = dir.path + "/vault", pass = dir.passphraseFile("pass", "correct horse battery")
        try makeVault(at: vault, passphraseFile: pass)
        let file = dir.path + "/export.xml"
        try Data(xml.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try cli.run(["import", file, "--vault", vault, "--passphrase-file", pass]).status == 0)
        return (vault, pass)
    }

    @Test func typesPrintsEveryHeldTypeAsTheSpecShapesIt() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try vaultWith(dir, """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Me HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexMale"/>
             <Record type="HKQuantityTypeIdentifierBloodGlucose" sourceName="Meter" unit="mg/dL" startDate="2024-05-03 07:00:00 +0200" endDate="2024-05-03 07:00:00 +0200" value="101"/>
             <Record type="HKQuantityTypeIdentifierBloodGlucose" sourceName="Meter" unit="mg/dL" startDate="2024-05-05 07:00:00 +0200" endDate="2024-05-05 07:00:00 +0200" value="97"/>
            </HealthData>
            """)
        let result = try cli.run(["types", "--vault", vault, "--passphrase-file", pass, "--json"])
        #expect(result.status == 0)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 2)
        #expect(rows[0]["type"] as? String == "Me" && rows[0]["short"] is NSNull && rows[0]["category"] as? String == "profile"
                && rows[0]["unit"] is NSNull && rows[0]["count"] as? Int == 1 && rows[0]["first"] is NSNull && rows[0]["last"] is NSNull)
        #expect(rows[1]["type"] as? String == "HKQuantityTypeIdentifierBloodGlucose" && rows[1]["short"] as? String == "blood-glucose"
                && rows[1]["category"] as? String == "vitals" && rows[1]["unit"] as? String == "mg/dL" && rows[1]["count"] as? Int == 2
                && rows[1]["first"] as? String == "2024-05-03" && rows[1]["last"] as? String == "2024-05-05")
        // The short name works where a metric is asked for.
        let summary = try cli.run(["summary", "blood-glucose", "--by", "month", "--vault", vault, "--passphrase-file", pass, "--json"])
        #expect(summary.status == 0 && summary.stdout.contains("\"value\":99"))
    }

    @Test func workoutsGroupsByPeriodAndKind() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try vaultWith(dir, """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" totalDistance="5" totalDistanceUnit="km" totalEnergyBurned="300" totalEnergyBurnedUnit="kcal" sourceName="Watch" startDate="2024-05-02 08:00:00 +0200" endDate="2024-05-02 08:30:00 +0200"/>
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" totalDistance="3" totalDistanceUnit="km" totalEnergyBurned="200" totalEnergyBurnedUnit="kcal" sourceName="Watch" startDate="2024-05-09 08:00:00 +0200" endDate="2024-05-09 08:20:00 +0200"/>
             <Workout workoutActivityType="HKWorkoutActivityTypeTraditionalStrengthTraining" duration="45" durationUnit="min" sourceName="Watch" startDate="2024-04-29 18:00:00 +0200" endDate="2024-04-29 18:45:00 +0200"/>
            </HealthData>
            """)
        let result = try cli.run(["workouts", "--by", "2weeks", "--to", "2024-05-14", "--vault", vault, "--passphrase-file", pass, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 2)
        // Oldest period first.
        #expect(rows[1]["period"] as? String == "2024-05-01..2024-05-14" && rows[1]["type"] as? String == "running"
                && rows[1]["count"] as? Int == 2 && rows[1]["minutes"] as? Double == 50 && rows[1]["energy"] as? Double == 500
                && rows[1]["distance"] as? Double == 8000)
        #expect(rows[0]["period"] as? String == "2024-04-17..2024-04-30" && rows[0]["type"] as? String == "traditional-strength-training"
                && rows[0]["count"] as? Int == 1 && rows[0]["minutes"] as? Double == 45 && rows[0]["distance"] as? Double == 0)
    }

    @Test func sleepPrintsOneObjectPerNight() throws {
        let dir = TemporaryDirectory()
        let (vault, pass) = try vaultWith(dir, """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-05-01 23:00:00 +0200" endDate="2024-05-02 02:00:00 +0200" value="HKCategoryValueSleepAnalysisAsleepCore"/>
             <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-05-02 02:00:00 +0200" endDate="2024-05-02 03:00:00 +0200" value="HKCategoryValueSleepAnalysisAsleepDeep"/>
            </HealthData>
            """)
        let result = try cli.run(["sleep", "--vault", vault, "--passphrase-file", pass, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            [{"asleep":240,"awake":0,"core":180,"deep":60,"end":"2024-05-02T03:00:00+02:00","inBed":0,"night":"2024-05-02","rem":0,"source":"Watch","start":"2024-05-01T23:00:00+02:00"}]

            """)
    }
}
