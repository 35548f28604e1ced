import Foundation
@testable import HealthModel
import Testing
@testable import Vault
import VaultEvents
import VaultTestSupport

/// Values like 1e308 (issue 35's review): refused at import with their reason, and a vault that
/// holds one (written by an older build) never makes a command crash.
@Suite(.timeLimit(.minutes(10))) struct AbsurdValueTests {
    @Test func aValueBeyondTenToTheTwelfthIsRefusedAtImport() throws {
        let t = try ImportTestVault()
        let report = try t.vault.importFiles([t.write("big.csv", """
            type,start,end,value,unit,source
            steps,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,1e308,count,Band
            heart-rate,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,-2e12,count/min,Band
            steps,2024-03-05T09:00:00Z,2024-03-05T10:00:00Z,1000000000000,count,Band

            """), t.write("big.json", """
            {"metric":"STEPS","data":[{"timeRange":"2024-03-06 08:00/2024-03-06 09:00","value":1e300},
                                      {"timeRange":"2024-03-06 09:00/2024-03-06 10:00","value":12}]}
            """)], timeZone: TimeZone(identifier: "UTC")!)
        #expect(report.added == 2 && report.rejected == 3)
        #expect(report.files[0].warnings == ["2 row(s) rejected: value beyond 10^12 in magnitude (first at line 2)"])
        #expect(report.files[1].warnings == ["1 entry rejected: value beyond 10^12 in magnitude (first at data[0])"])
    }

    @Test func aVaultHoldingOneFromAnOlderBuildAnswersEveryCommand() throws {
        let dir = TemporaryDirectory("absurd")
        let path = dir.path + "/v"
        let vault = try makeVault(at: path)
        let start = HealthTimestamp(seconds: 1_709_625_600, utcOffset: 0)  // 2024-03-05
        let end = HealthTimestamp(seconds: 1_709_629_200, utcOffset: 0)
        try vault.append([
            .sample(HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "Band"), start: start, end: end,
                                 value: .quantity(DecimalValue(double: 1e308), unit: "count"))),
            .sample(HealthSample(type: "HKQuantityTypeIdentifierStepCount", source: HealthSource(name: "Band"), start: end,
                                 end: HealthTimestamp(seconds: end.seconds + 60, utcOffset: 0), value: .quantity(DecimalValue(double: 1e308), unit: "count"))),
            .sample(HealthSample(type: "HKQuantityTypeIdentifierHeartRate", source: HealthSource(name: "Band"), start: start, end: start,
                                 value: .quantity(DecimalValue(double: 1e308), unit: "count/min"))),
        ])
        let pass = dir.passphraseFile("pass", "old passphrase")
        for command in [["rings"], ["summary", "steps"], ["summary", "steps", "--json"], ["summary", "heart-rate"], ["streaks"], ["types"],
                        ["report", "--out", dir.path + "/r.html"]] {
            let result = try CLIRunner().run(command + ["--vault", path, "--passphrase-file", pass])
            #expect(result.status == 0, "vaultctl \(command.joined(separator: " ")): \(result.stderr.prefix(300))")
        }
    }
}
