import Foundation
import SyntheticHealth
import Testing

/// grant, export and bundle open as a person and a researcher run them.
@Suite(.timeLimit(.minutes(10))) struct ConsentCommandTests {
    let cli = CLIRunner()

    @Test func grantExportAndOpenAsTheSpecSays() throws {
        let dir = TemporaryDirectory("consent-cli")
        let vault = dir.path + "/vault", pass = dir.passphraseFile("pass", "consent test passphrase")
        func run(_ args: [String]) throws -> CLIRunner.Result { try cli.run(args + ["--vault", vault, "--passphrase-file", pass]) }
        let zip = dir.path + "/export.zip"
        try SyntheticExport.writeZip(to: zip, options: .init(days: 5, firstDay: (2024, 5, 1), tripStart: 100))
        try makeVault(at: vault, passphraseFile: pass)
        #expect(try run(["import", zip]).status == 0)
        #expect(try cli.run(["keygen", "--out", dir.path + "/lab"]).status == 0)
        let keyMode = try FileManager.default.attributesOfItem(atPath: dir.path + "/lab.key")[.posixPermissions] as? Int
        #expect(keyMode == 0o600)
        #expect(try cli.run(["keygen", "--out", dir.path + "/lab"]).status != 0)  // never overwrites

        let identity = try JSONSerialization.jsonObject(with: Data(try run(["identity", "--json"]).stdout.utf8)) as! [String: String]
        #expect(Set(identity.keys) == ["fingerprint", "signingKey", "encryptionKey"])

        let refused = try run(["export", "lab", "--out", dir.path + "/early.bundle"])
        #expect(refused.status != 0 && refused.stderr.contains("lab"))
        #expect(try run(["recipient", "add", "lab", "--key", dir.path + "/lab.pub"]).status == 0)
        let none = try run(["export", "lab", "--out", dir.path + "/none.bundle"])
        #expect(none.status != 0 && none.stderr.contains("no consent is in force"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/none.bundle"))

        #expect(try run(["grant", "lab", "--categories", "activity,heart", "--from", "2024-05-02", "--to", "2024-05-03",
                         "--granularity", "hourly", "--expires", "2099-01-01", "--purpose", "test"]).status == 0)
        #expect(try run(["grant", "lab", "--categories", "walking"]).status != 0)
        let consents = try JSONSerialization.jsonObject(with: Data(try run(["consents", "--json"]).stdout.utf8)) as! [[String: Any]]
        #expect(consents.count == 1)
        for key in ["recipient", "categories", "from", "to", "granularity", "expires", "purpose", "grantedAt"] {
            #expect(consents[0].keys.contains(key), "\(key)")
        }
        #expect(consents[0]["categories"] as? [String] == ["activity", "heart"] && consents[0]["from"] as? String == "2024-05-02")

        let exported = try run(["export", "lab", "--out", dir.path + "/b.bundle", "--json", "--csv"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let opened = try cli.run(["bundle", "open", dir.path + "/b.bundle", "--key", dir.path + "/lab.key", "--out", dir.path + "/out",
                                  "--expect-sender", identity["fingerprint"]!])
        #expect(opened.status == 0, "\(opened.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/out/data").sorted()
        #expect(files == ["activity.csv", "activity.ndjson", "heart.csv", "heart.ndjson"])
        let unchecked = try cli.run(["bundle", "open", dir.path + "/b.bundle", "--key", dir.path + "/lab.key", "--out", dir.path + "/out2"])
        #expect(unchecked.status != 0 && unchecked.stderr.contains("--expect-sender FPR"), "\(unchecked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/out2"))
        let again = try cli.run(["bundle", "open", dir.path + "/b.bundle", "--key", dir.path + "/lab.key", "--out", dir.path + "/out",
                                 "--expect-sender", identity["fingerprint"]!])
        #expect(again.status != 0 && again.stderr.contains("already exists"), "\(again.stderr)")

        #expect(try run(["revoke", "lab"]).status == 0)
        #expect(try run(["consents", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let history = try JSONSerialization.jsonObject(with: Data(try run(["history", "--json"]).stdout.utf8)) as! [[String: Any]]
        #expect(history.map { $0["kind"] as! String } == ["init", "identity", "import", "recipient", "grant", "export", "revoke"])
        #expect(history.allSatisfy { $0["seq"] is Int && $0["at"] is String && $0["detail"] is [String: Any] })
    }
}
