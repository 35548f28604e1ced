import CompanionClient
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `vaultctl serve` as a phone meets it: a real server process on loopback, real TLS with the
/// certificate pinned, real request shapes (Yappi, Health Auto Export), and every refusal.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CompanionEndpointTests {
    @Test func yappiPostsUpsertPerTimeRangeAndSummariesShowTheLatestValue() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        try served.start()
        let client = try served.client(pin: cert)

        let first = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)]))
        #expect(first.status == 201)
        #expect(object(first.body) as NSDictionary == ["added": 1, "replaced": 0, "duplicates": 0, "rejected": 0, "erased": 0])
        let again = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)]))
        #expect(object(again.body) as NSDictionary == ["added": 0, "replaced": 1, "duplicates": 0, "rejected": 0, "erased": 0])
        let same = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 52)]))
        #expect(object(same.body) as NSDictionary == ["added": 0, "replaced": 0, "duplicates": 1, "rejected": 0, "erased": 0])
        // An array of posts, a second hour and a repeat of it with another value in one body.
        let many = "[" + yappi("STEPS", [("2025-08-06 09:00/2025-08-06 10:00", 10)]) + "," + yappi("STEPS", [("2025-08-06 09:00/2025-08-06 10:00", 12)]) + "]"
        let both = try client.post("/companion/health", token: token, json: many)
        #expect(object(both.body) as NSDictionary == ["added": 1, "replaced": 1, "duplicates": 0, "rejected": 0, "erased": 0])

        // Read while the server runs: the latest values only (52 + 12, not 38 + 52 + 10 + 12).
        #expect(try served.dailyTotals("steps", from: "2025-08-06", to: "2025-08-06") == ["2025-08-06": 64])
        let anchor = try client.send(.GET, "/companion/anchor?metric=STEPS", headers: [("Authorization", "Bearer " + token)])
        #expect(anchor.status == 200)
        #expect(object(anchor.body)["through"] as? String == "2025-08-06T10:00:00+00:00")
        client.close()
        #expect(served.stop(SIGTERM) == (0, false))
        // A rebuild from the log gives the same figure: the supersession is an event.
        #expect(try served.run(["rebuild"]).status == 0)
        #expect(try served.dailyTotals("steps", from: "2025-08-06", to: "2025-08-06") == ["2025-08-06": 64])
        #expect(try served.run(["verify"]).status == 0)
    }

    @Test func healthAutoExportMetricsAndAWorkoutAreKept() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("auto export")
        try served.start()
        let client = try served.client(pin: cert)
        let body = """
            {"data":{"metrics":[
              {"name":"step_count","units":"count","data":[
                {"date":"2024-02-06 14:30:00 -0800","qty":120,"source":"Apple Watch"},
                {"date":"2024-02-06 15:30:00 -0800","qty":80,"source":"Apple Watch"}]},
              {"name":"heart_rate","units":"count/min","data":[{"date":"2024-02-06 14:30:00 -0800","Min":60,"Avg":72,"Max":90,"source":"Apple Watch"}]},
              {"name":"active_energy","units":"kJ","data":[{"date":"2024-02-06 14:30:00 -0800","qty":41.84}]}],
             "workouts":[{"name":"Outdoor Run","start":"2024-02-06 07:00:00 -0800","end":"2024-02-06 07:30:00 -0800","duration":1800,
                          "activeEnergyBurned":{"qty":300,"units":"kcal"},"distance":{"qty":5,"units":"km"}}]}}
            """
        let response = try client.post("/companion/health", token: token, json: body)
        #expect(response.status == 201)
        #expect(object(response.body) as NSDictionary == ["added": 5, "replaced": 0, "duplicates": 0, "rejected": 0, "erased": 0])
        // Health Auto Export posts overlapping windows: the same points again are duplicates.
        let repeated = try client.post("/companion/health", token: token, json: body)
        #expect(object(repeated.body) as NSDictionary == ["added": 0, "replaced": 0, "duplicates": 5, "rejected": 0, "erased": 0])
        client.close()
        served.stop()
        #expect(try served.dailyTotals("steps", from: "2024-02-06", to: "2024-02-06") == ["2024-02-06": 200])
        #expect(try served.dailyTotals("active-energy", from: "2024-02-06", to: "2024-02-06") == ["2024-02-06": 10])
        let workouts = try served.run(["workouts", "--from", "2024-02-06", "--to", "2024-02-06", "--json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(workouts.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 1)
        #expect(rows.first?["type"] as? String == "running")
        #expect(rows.first?["minutes"] as? Double == 30)
        #expect(rows.first?["distance"] as? Double == 5000)
        #expect(rows.first?["energy"] as? Double == 300)
    }

    @Test func refusalsAreStatusesWithJSONErrorsAndKeepNothing() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        try served.start()
        let client = try served.client(pin: cert)
        let post = yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)])

        let health = try client.send(.GET, "/healthz")
        #expect(health.status == 200 && health.body == #"{"ok":true}"#)
        let missing = try client.post("/companion/health", token: nil, json: post)
        #expect(missing.status == 401 && object(missing.body)["error"] as? String == "missing, unknown or revoked token")
        let wrong = try client.post("/companion/health", token: "hv_" + String(repeating: "A", count: 43), json: post)
        #expect(wrong.status == 401)
        let malformed = try client.post("/companion/health", token: token, json: "{\"metric\":\"STEPS\",\n\"data\":[{]}")
        #expect(malformed.status == 400)
        #expect((object(malformed.body)["error"] as? String)?.hasPrefix("body:2:10: not valid JSON") == true)
        let shapeless = try client.post("/companion/health", token: token, json: #"{"steps":5}"#)
        #expect(shapeless.status == 400)
        let zone = try client.post("/companion/health", token: token, json: post, headers: [("X-Timezone", "Mars/Olympus")])
        #expect(zone.status == 400)
        let huge = "[" + Array(repeating: post, count: 120_000).joined(separator: ",") + "]"
        #expect(huge.utf8.count > 8 << 20)
        let oversize = try client.post("/companion/health", token: token, json: huge)
        #expect(oversize.status == 413)

        // X-API-Key works as Bearer does; a Berlin clock puts 08:00 at 06:00 UTC.
        let keyed = try served.client(pin: cert)
        let viaKey = try keyed.send(.POST, "/companion/health", headers: [("X-API-Key", token), ("X-Timezone", "Europe/Berlin")], body: Array(post.utf8))
        #expect(viaKey.status == 201)
        // The scheme in any case, spaces and tabs around the token (HTTP's OWS): the same app,
        // whose repeat of the post is a duplicate.
        let spaced = try keyed.send(.POST, "/companion/health", headers: [("Authorization", "bEaReR \t " + token + " \t"), ("X-Timezone", "Europe/Berlin")],
                                    body: Array(post.utf8))
        #expect(spaced.status == 201 && spaced.body == #"{"added":0,"duplicates":1,"erased":0,"rejected":0,"replaced":0}"#, "\(spaced.status) \(spaced.body)")
        keyed.close()

        // Revoked while serving: refused at once. Paired while serving: accepted at once.
        #expect(try served.run(["companion", "revoke", "phone"]).status == 0)
        let revoked = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-07 08:00/2025-08-07 09:00", 5)]))
        #expect(revoked.status == 401)
        let (second, _) = try served.pair("tablet")
        let fresh = try client.post("/companion/health", token: second, json: yappi("STEPS", [("2025-08-08 08:00/2025-08-08 09:00", 7)]))
        #expect(fresh.status == 201)
        // The name paired again for a new phone: the old (stolen) phone's token stays refused.
        let (replacement, _) = try served.pair("phone")
        let stolen = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-09 08:00/2025-08-09 09:00", 9)]))
        #expect(stolen.status == 401)
        let stolenAnchor = try client.send(.GET, "/companion/anchor?metric=STEPS", headers: [("Authorization", "Bearer " + token)])
        #expect(stolenAnchor.status == 401)
        // The new phone resumes where the name's data ends (anchors are per app name).
        let anchor = try client.send(.GET, "/companion/anchor?metric=STEPS", headers: [("Authorization", "Bearer " + replacement)])
        #expect(anchor.status == 200 && object(anchor.body)["through"] is String)
        client.close()
        served.stop()
        // Only the accepted posts are in the vault.
        #expect(try served.dailyTotals("steps") == ["2025-08-06": 38, "2025-08-08": 7])
        // The audit trail names the apps paired and revoked, nothing of their tokens.
        let history = try served.run(["history", "--json"])
        let events = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]])
        #expect(events.filter { ($0["kind"] as? String ?? "").hasPrefix("companion") }.map { "\($0["kind"]!) \(($0["detail"] as? [String: String])?["app"] ?? "")" }
                == ["companion-pair phone", "companion-revoke phone", "companion-pair tablet", "companion-pair phone"])
        #expect(!history.stdout.contains(token))
    }

    @Test func aClientPinningAnotherCertificateIsRefused() throws {
        let served = try ServedVault()
        let (_, cert) = try served.pair("phone")
        try served.start()
        // Refused by the pin, not by a closed port: the handshake's certificate check names it.
        #expect {
            let client = try served.client(pin: String(repeating: "0", count: 64))
            _ = try client.send(.GET, "/healthz")
        } throws: { "\($0)".contains("CERTIFICATE_VERIFY_FAILED") }
        let pinned = try served.client(pin: cert)
        #expect(try pinned.send(.GET, "/healthz").status == 200)
        pinned.close()
        #expect(cert.count == 64)
    }

    @Test func otherCommandsWriteWhileTheServerRunsAndItSeesTheirEffects() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        try served.start()
        let client = try served.client(pin: cert)
        #expect(try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)])).status == 201)
        // A file import of the same source's format and a goal, while the server holds the vault.
        let file = served.directory.file("steps.json")
        try Data(yappi("STEPS", [("2025-08-06 12:00/2025-08-06 13:00", 100)]).utf8).write(to: URL(fileURLWithPath: file))
        #expect(try served.run(["import", file]).status == 0)
        #expect(try served.run(["goals", "set", "move", "450", "--from", "2025-08-01"]).status == 0)
        // The server reopens the log the commands moved, and goes on.
        #expect(try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 40)])).status == 201)
        #expect(try served.dailyTotals("steps", from: "2025-08-06", to: "2025-08-06") == ["2025-08-06": 140])
        let goals = try served.run(["goals", "--json"])
        #expect(goals.stdout.contains("450"))
        client.close()
        #expect(served.stop() == (0, false))
        #expect(try served.run(["verify"]).status == 0)
    }

    /// `passwd --rekey` retires what an old keyslot could still serve with: the certificate phones
    /// pinned and their tokens. A phone pinning the old certificate is refused in the handshake
    /// (the pin, not a refused connection), the old token is refused under the new certificate,
    /// and a new pairing works.
    @Test(.timeLimit(.minutes(10))) func aRekeyRetiresTheCertificateAndTheTokensSoPhonesPairAgain() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        let newPass = served.directory.passphraseFile("new", "a new passphrase after the rekey")
        let rekey = try served.run(["passwd", "--rekey", "--new-passphrase-file", newPass])
        #expect(rekey.status == 0 && rekey.stderr.contains("the companion server gets a new certificate and the tokens of phone were revoked"),
                "\(rekey.stderr)")
        try Data("a new passphrase after the rekey\n".utf8).write(to: URL(fileURLWithPath: served.passFile))
        let (newToken, newCert) = try served.pair("phone")
        #expect(newCert != cert && newToken != token)
        try served.start()
        #expect {
            let pinnedOld = try served.client(pin: cert)
            defer { pinnedOld.close() }
            _ = try pinnedOld.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 3)]))
        } throws: { error in "\(error)".contains("CERTIFICATE_VERIFY_FAILED") }
        let client = try served.client(pin: newCert)
        let oldToken = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 3)]))
        #expect(oldToken.status == 401)
        #expect(try client.post("/companion/health", token: newToken, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 3)])).status == 201)
        client.close()
        served.stop()
    }

    @Test func aFloodGets429AndAStalledConnectionIsClosed() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        // One post in a thousand seconds past a burst of three: no test runs long enough to see a
        // token come back, however slow the machine.
        try served.start(limits: "rate=0.001,burst=3,idle=1")
        let client = try served.client(pin: cert)
        var statuses: [Int] = []
        for hour in 0..<6 {
            let post = yappi("STEPS", [("2025-08-06 0\(hour):00/2025-08-06 0\(hour):30", 10)])
            statuses.append(try client.post("/companion/health", token: token, json: post).status)
        }
        // Three at once, then none for a thousand seconds.
        #expect(statuses == [201, 201, 201, 429, 429, 429])
        let refused = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-07 01:00/2025-08-07 02:00", 1)]))
        #expect(refused.status == 429)
        #expect(object(refused.body)["error"] as? String == "too many posts from this app; retry in a second")
        client.close()
        // A connection that sends nothing (not even a TLS hello) is closed after the idle time (1 s
        // here): the socket is watched until the server ends it, not slept on.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(served.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        let clock = ContinuousClock(), opened = clock.now
        var watch = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        #expect(poll(&watch, 1, 60_000) == 1, "the idle connection was not closed within 60 s")
        var byte: UInt8 = 0
        #expect(recv(socket, &byte, 1, 0) <= 0)
        let held = opened.duration(to: clock.now)
        #expect(held >= .milliseconds(900) && held < .seconds(30), "closed after \(held)")
        close(socket)
        served.stop()
        // Only the accepted posts are kept.
        let kept = try served.dailyTotals("steps", from: "2025-08-06", to: "2025-08-07").values.reduce(0, +)
        #expect(kept == 30)
    }

    /// The default limits hold with no override (docs/companion.md): a body past 8 MiB and a post
    /// of more than 100,000 records get 413 and change nothing; one just under both is taken.
    @Test func theDefaultBodyAndRecordLimitsHoldWithoutAnOverride() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        try served.start()
        let client = try served.client(pin: cert)
        func entries(_ count: Int) -> String {
            // One-second samples from 2025-08-06 00:00 local time on (Yappi's form): distinct ranges.
            func time(_ second: Int) -> String {
                let day = 6 + second / 86_400, rest = second % 86_400
                return String(format: "2025-08-%02d %02d:%02d:%02d", day, rest / 3600, rest % 3600 / 60, rest % 60)
            }
            return (0..<count).map { #"{"timeRange":"\#(time($0))/\#(time($0 + 1))","value":1}"# }.joined(separator: ",")
        }
        let tooMany = #"{"metric":"STEPS","data":[\#(entries(100_001))]}"#
        #expect(tooMany.utf8.count < 8 << 20)
        let refusedRecords = try client.post("/companion/health", token: token, json: tooMany)
        #expect(refusedRecords.status == 413, "\(refusedRecords.status)")
        let padded = #"{"metric":"STEPS","data":[{"timeRange":"2025-08-06 08:00/2025-08-06 09:00","value":38}],"pad":""# + String(repeating: "x", count: 8 << 20) + #""}"#
        let second = try served.client(pin: cert)
        defer { second.close() }
        let refusedBody = try second.post("/companion/health", token: token, json: padded)
        #expect(refusedBody.status == 413, "\(refusedBody.status)")
        client.close()
        let taken = try served.client(pin: cert)
        #expect(try taken.post("/companion/health", token: token, json: #"{"metric":"STEPS","data":[\#(entries(2_000))]}"#).status == 201)
        taken.close()
        served.stop()
        #expect(try served.dailyTotals("steps") == ["2025-08-06": 2_000])
    }

    @Test func anEraseWhileServingRefusesPostsIntoTheErasedMonth() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("phone")
        try served.start()
        let client = try served.client(pin: cert)
        #expect(try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 38)])).status == 201)
        #expect(try served.run(["erase", "--categories", "activity", "--from", "2025-08", "--to", "2025-08", "--yes"]).status == 0)
        let after = try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-07 08:00/2025-08-07 09:00", 5),
                                                                                             ("2025-09-01 08:00/2025-09-01 09:00", 6)]))
        #expect(after.status == 201)
        #expect(object(after.body) as NSDictionary == ["added": 1, "replaced": 0, "duplicates": 0, "rejected": 0, "erased": 1])
        client.close()
        served.stop()
        #expect(try served.dailyTotals("steps") == ["2025-09-01": 6])
        #expect(try served.run(["verify"]).status == 0)
    }

    @Test func theServerLogNamesNoValueTokenOrApp() throws {
        let served = try ServedVault()
        let (token, cert) = try served.pair("Alice's phone")
        try served.start(logLevel: "trace")
        let client = try served.client(pin: cert)
        #expect(try client.post("/companion/health", token: token, json: yappi("STEPS", [("2025-08-06 08:00/2025-08-06 09:00", 987_654)])).status == 201)
        #expect(try client.post("/companion/health", token: token, json: "{\"metric\": 987653").status == 400)
        #expect(try client.post("/companion/health", token: "hv_wrong_987652", json: "{}").status == 401)
        client.close()
        served.stop()
        let log = served.serverLog()
        for secret in ["98765", token, "hv_wrong", "Alice", "STEPS"] { #expect(!log.contains(secret), "\(secret) in the log") }
    }

    @Test func noTLSIsRefusedOffLoopback() throws {
        let served = try ServedVault()
        // A name that starts like a loopback address is a name, resolved anywhere (issue 35's review).
        for listen in ["0.0.0.0:0", "127.attacker.example:0", "127.0.0.1.nip.io:0", "[::2]:0"] {
            let result = try served.run(["serve", "--listen", listen, "--no-tls"])
            #expect(result.status != 0 && result.stderr.contains("--no-tls is only allowed on a loopback address"), "\(listen): \(result.stderr)")
        }
    }
}
