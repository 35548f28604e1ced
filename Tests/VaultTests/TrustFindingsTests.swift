import Envelope
import EventLog
import Foundation
@testable import HealthModel
@testable import Importers
import Projections
@testable import ResearchBundle
import Testing
import VaultTestSupport
@testable import Vault

/// One regression test per medium and low finding of issue 15's security review, each asserting
/// the specific refusal or output.
@Suite struct TrustFindingsTests {
    static let utc = TimeZone(identifier: "UTC")!

    final class Shared {
        let t: ImportTestVault
        let lines: SharedLines
        init() throws {
            t = try ImportTestVault()
            lines = try SharedLines(t)
        }
        var vaultPath: String { t.path }
    }

    // MARK: Rollback through an old head record

    /// A vault with a grant to `lab`; `afterGrant` runs on it once the head record that names the
    /// grant's commit has been kept, which is returned.
    static func grantedVault(at path: String, afterGrant: (Vault) throws -> Void) throws -> Data {
        let vault = try makeVault(at: path, passphrase: "p")
        let key = (path as NSString).deletingLastPathComponent + "/lab"
        try RecipientKeyFiles.generate(prefix: key)
        try vault.addRecipient(name: "lab", publicKeyFile: key + ".pub")
        try vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .daily, expires: nil, purpose: nil)
        let head = try Data(contentsOf: URL(fileURLWithPath: path + "/events.head"))
        try afterGrant(vault)
        return head
    }

    @Test func anOlderHeadOverACutLogIsDamageAndTheRevocationStays() throws {
        let dir = TemporaryDirectory("rollback")
        let path = dir.path + "/v"
        let oldHead = try Self.grantedVault(at: path) { vault in
            _ = try vault.setGoal(.move, value: 500, from: LocalDay(year: 2024, month: 1, day: 1))
            try vault.revoke(recipient: "lab", categories: nil)
        }
        // The attack: the older head put back, and a few bytes cut off the log's last frame.
        try oldHead.write(to: URL(fileURLWithPath: path + "/events.head"))
        let log = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/events.log"))
        try log.truncate(atOffset: try log.seekToEnd() - 5)
        try log.close()
        let logBytes = try Data(contentsOf: URL(fileURLWithPath: path + "/events.log"))

        #expect {
            _ = try Vault.open(at: path, passphrase: passphrase("p"), mode: .readWrite)
        } throws: { error in
            guard case EventLogError.headBehindLog(_, let head, let log, let commits, let offset) = error else { return false }
            return log > head && commits == 1 && offset != nil
        }
        let report = try Vault.verify(at: path, passphrase: passphrase("p"))
        #expect(!report.isOK && report.problems.contains { $0.contains("an older head record was put back") })
        // Nothing was cut: the goal's frame is still there for a backup-restore to save.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/events.log")) == logBytes)
    }

    @Test func anOlderHeadOverALogCutCleanlyTwoCommitsOnIsDamageToo() throws {
        let dir = TemporaryDirectory("rollback2")
        let path = dir.path + "/v"
        var cutAt: UInt64 = 0
        let oldHead = try Self.grantedVault(at: path) { vault in
            _ = try vault.setGoal(.move, value: 500, from: LocalDay(year: 2024, month: 1, day: 1))
            _ = try vault.setGoal(.move, value: 600, from: LocalDay(year: 2024, month: 2, day: 1))
            cutAt = (try FileManager.default.attributesOfItem(atPath: path + "/events.log")[.size] as! NSNumber).uint64Value
            try vault.revoke(recipient: "lab", categories: nil)
        }
        // The revocation's frame cut away whole, and the head from before the two goals put back:
        // no torn frame, but two commits past the head, which no crash leaves.
        try oldHead.write(to: URL(fileURLWithPath: path + "/events.head"))
        let log = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/events.log"))
        try log.truncate(atOffset: cutAt)
        try log.close()
        #expect {
            _ = try Vault.open(at: path, passphrase: passphrase("p"), mode: .readWrite)
        } throws: { error in
            guard case EventLogError.headBehindLog(_, _, _, let commits, let offset) = error else { return false }
            return commits == 2 && offset == nil
        }
        #expect(!(try Vault.verify(at: path, passphrase: passphrase("p"))).isOK)
    }

    // MARK: Bundles

    @Test func bundleVersionTwoHidesTheSenderAndPadsItsSize() throws {
        let s = try Shared()
        _ = try s.t.vault.importFiles([s.t.write("s.csv", """
            type,start,end,value,unit,source
            steps,2024-03-05T08:00:00Z,2024-03-05T09:00:00Z,1234,count,Band

            """)], timeZone: Self.utc)
        let opened = try s.lines.export([.activity], from: nil, to: nil)
        let bundle = try #require(try FileManager.default.contentsOfDirectory(atPath: s.t.dir.path).first { $0.hasSuffix(".bundle") })
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: s.t.dir.path + "/" + bundle)))
        let identity = try s.t.vault.identity()
        // Version 2, and neither public key of the vault anywhere in the file.
        #expect(bytes[8] == 2 && bytes[9] == 0)
        #expect(Data(bytes).range(of: Data(identity.signing.publicKey)) == nil)
        #expect(Data(bytes).range(of: Data(identity.encryption.publicKey)) == nil)
        // The plaintext is padded to a Padmé bucket: ciphertext = header + padded plaintext + 4 + 17.
        let plaintext = bytes.count - BundleFormat.headerBytes - 4 - 17
        #expect(plaintext == BundleFormat.padme(plaintext) && plaintext > 0)
        // No whole-vault counters in the manifest.
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: opened.out + "/manifest.json"))) as! [String: Any]
        #expect((manifest["logPosition"] as? [String: Any]).map { Set($0.keys) } == ["chainHash"])
        #expect(manifest["version"] as? Int == 2)
    }

    @Test func padmeLeaksOnlyTheTopBitsOfASize() {
        #expect(BundleFormat.padme(1000) == 1024 && BundleFormat.padme(1_000_000) == 1_015_808)
        for length in [3, 17, 100, 4097, 123_456, 9_999_999] {
            let padded = BundleFormat.padme(length)
            #expect(padded >= length && Double(padded) <= Double(length) * 1.12 + 1, "\(length) → \(padded)")
        }
    }

    @Test func aFormatOneBundleStillOpens() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/Fixtures/bundle-v1"
        let sender = try String(contentsOfFile: fixtures + "/sender.txt", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let dir = TemporaryDirectory("v1")
        let opened = try BundleReader.open(fixtures + "/v1.bundle", keyFile: fixtures + "/lab.key", outputDirectory: dir.path + "/out",
                                           expectSender: sender)
        #expect(opened.files == ["manifest.json", "data/activity.ndjson", "data/heart.ndjson"])
        #expect(opened.counts == ["activity": 2, "heart": 1])
    }

    // MARK: Identity

    @Test func aDeletedIdentityIsRefusedUntilRotatedInTheAuditTrail() throws {
        let s = try Shared()
        let before = try s.t.vault.identity().fingerprint
        try FileManager.default.removeItem(atPath: s.vaultPath + "/identity.sealed")
        let vault = s.t.vault
        #expect(throws: VaultError.identityMissing(path: s.vaultPath + "/identity.sealed", fingerprint: before)) {
            try vault.identity()
        }
        try vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .daily, expires: nil, purpose: nil)
        #expect(throws: VaultError.identityMissing(path: s.vaultPath + "/identity.sealed", fingerprint: before)) {
            try vault.export(to: "lab", path: s.t.dir.path + "/x.bundle")
        }
        #expect(!FileManager.default.fileExists(atPath: s.t.dir.path + "/x.bundle"))
        let (previous, rotated) = try vault.rotateIdentity()
        #expect(previous == before && rotated.fingerprint != before)
        #expect(try vault.identity().fingerprint == rotated.fingerprint)
        let records = try vault.history().compactMap { if case .identityRecorded(let r) = $0.event { r } else { nil } }
        #expect(records.map(\.reason) == [.created, .rotated])
        #expect(records.map(\.fingerprint) == [before, rotated.fingerprint])
    }

    @Test func anIdentityFileSwappedBackAfterARotationIsRefused() throws {
        let s = try Shared()
        let old = try Data(contentsOf: URL(fileURLWithPath: s.vaultPath + "/identity.sealed"))
        let before = try s.t.vault.identity().fingerprint
        let (_, rotated) = try s.t.vault.rotateIdentity()
        try old.write(to: URL(fileURLWithPath: s.vaultPath + "/identity.sealed"))
        #expect(throws: VaultError.identityMismatch(recorded: rotated.fingerprint, found: before)) {
            try Vault.open(at: s.vaultPath, passphrase: passphrase("p")).identity()
        }
    }

    @Test func aVaultFromBeforeIdentitiesWereRecordedAdoptsItsOwnOnce() throws {
        let t = try ImportTestVault()
        // As vaults made before this change: an identity file, no record of it in the log.
        let vault = t.vault
        let identity = try vault.identity()
        var ledger = ConsentLedger()
        ledger.apply(.vaultCreated(at: Date(), kdf: "test"))
        #expect(try vault.identity(ledger: ledger).fingerprint == identity.fingerprint)
        let reasons = try vault.history().compactMap { if case .identityRecorded(let r) = $0.event { r.reason } else { nil } }
        #expect(reasons == [.created, .adopted])
    }

    // MARK: Low findings

    @Test func aPlaintextCopyThroughALinkIntoTheVaultIsRefused() throws {
        let t = try ImportTestVault()
        let link = t.dir.path + "/elsewhere"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: t.path)
        #expect(throws: VaultError.plaintextInsideVault(path: link + "/copy.sqlite")) {
            try t.vault.writePlaintextProjections(to: link + "/copy.sqlite")
        }
        let dangling = t.dir.path + "/dangling.sqlite"
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: t.path + "/plain.sqlite")
        #expect(throws: VaultError.fileExists(path: dangling)) { try t.vault.writePlaintextProjections(to: dangling) }
        #expect(!FileManager.default.fileExists(atPath: t.path + "/plain.sqlite"))
    }

    @Test func spreadsheetFormulasInBundleCSVsStayText() throws {
        let s = try Shared()
        _ = try s.t.vault.importFiles([s.t.write("s.csv", """
            type,start,end,value,unit,source
            =1+2,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,@SUM(A1),,Band
            noise,2024-03-05T08:00:00Z,2024-03-05T08:00:00Z,-12.5,dB,Band

            """)], timeZone: Self.utc)
        let csv = try s.lines.export([.other], from: nil, to: nil).csv(.other)
        #expect(csv.contains("other,'=1+2,"))
        #expect(csv.contains(",'@SUM(A1),"))
        #expect(csv.contains(",-12.5,dB,"))
    }

    @Test func routeReferencesOutsideWorkoutRoutesAreNotRead() throws {
        let t = try ImportTestVault()
        try Data("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2024-03-05T08:00:00Z</time></trkpt></trkseg></trk></gpx>".utf8)
            .write(to: URL(fileURLWithPath: t.dir.path + "/secret.gpx"))
        try FileManager.default.createDirectory(atPath: t.dir.path + "/export/workout-routes", withIntermediateDirectories: true)
        let xml = t.dir.path + "/export/export.xml"
        try Data(export("""
            <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:30:00 +0000">
             <WorkoutRoute sourceName="Watch" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:30:00 +0000">
              <FileReference path="/workout-routes/../../secret.gpx"/>
             </WorkoutRoute>
            </Workout>
            """).utf8).write(to: URL(fileURLWithPath: xml))
        let report = try t.vault.importFiles([xml], timeZone: Self.utc)
        #expect(report.files[0].warnings.contains("1 route reference(s) outside workout-routes/ ignored (only files of the export are read)"))
        #expect(try t.dataEvents().contains { if case .route = $0 { true } else { false } } == false)
        #expect(AppleHealthImporter.isRouteFilePath("/workout-routes/route_2024-03-05_8.00am.gpx"))
        #expect(!AppleHealthImporter.isRouteFilePath("workout-routes/../x.gpx") && !AppleHealthImporter.isRouteFilePath("/etc/passwd"))
    }

    /// A route file (or the folder) that is a symbolic link is not followed (issue 35's review):
    /// it could lead to any file of the disk.
    @Test func aRouteFileReachedThroughASymbolicLinkIsNotRead() throws {
        let t = try ImportTestVault()
        let secret = t.dir.path + "/secret.gpx"
        try Data("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2024-03-05T08:00:00Z</time></trkpt></trkseg></trk></gpx>".utf8)
            .write(to: URL(fileURLWithPath: secret))
        for (folder, linkFolder) in [("export", false), ("export2", true)] {
            let routes = t.dir.path + "/\(folder)/workout-routes"
            if linkFolder {
                try FileManager.default.createDirectory(atPath: t.dir.path + "/elsewhere", withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: secret, toPath: t.dir.path + "/elsewhere/route_1.gpx")
                try FileManager.default.createDirectory(atPath: t.dir.path + "/\(folder)", withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: routes, withDestinationPath: t.dir.path + "/elsewhere")
            } else {
                try FileManager.default.createDirectory(atPath: routes, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: routes + "/route_1.gpx", withDestinationPath: secret)
            }
            let xml = t.dir.path + "/\(folder)/export.xml"
            try Data(export("""
                <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="Watch" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:30:00 +0000">
                 <WorkoutRoute sourceName="Watch" startDate="2024-03-05 08:00:00 +0000" endDate="2024-03-05 08:30:00 +0000">
                  <FileReference path="/workout-routes/route_1.gpx"/>
                 </WorkoutRoute>
                </Workout>
                """).utf8).write(to: URL(fileURLWithPath: xml))
            let report = try t.vault.importFiles([xml], timeZone: Self.utc)
            #expect(report.files[0].warnings.contains("1 route file(s) reached through a symbolic link not read (only files of the export are read)"),
                    "\(folder): \(report.files[0].warnings)")
        }
        #expect(try t.dataEvents().contains { if case .route = $0 { true } else { false } } == false)
    }

    @Test func initMakesAnOpenDirectoryPrivate() throws {
        let dir = TemporaryDirectory("perm")
        let path = dir.path + "/open"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        _ = try makeVault(at: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o700)
    }

    /// Aggregates never give a reading back: an hour with one reading is withheld, and then also
    /// the day's hour with the fewest (else the daily figure minus the other hours gives it);
    /// min and max need four readings (with three, 3 × average − min − max is the third).
    /// Expected values are worked out by hand from the rows below.
    @Test func aggregatesNeverGiveAReadingBack() throws {
        let s = try Shared()
        _ = try s.t.vault.importFiles([s.t.write("s.csv", """
            type,start,end,value,unit,source
            heart-rate,2024-03-05T08:10:00Z,2024-03-05T08:10:00Z,61,count/min,Band
            heart-rate,2024-03-05T09:10:00Z,2024-03-05T09:10:00Z,70,count/min,Band
            heart-rate,2024-03-05T09:20:00Z,2024-03-05T09:20:00Z,72,count/min,Band
            heart-rate,2024-03-05T09:30:00Z,2024-03-05T09:30:00Z,80,count/min,Band
            heart-rate,2024-03-05T10:05:00Z,2024-03-05T10:05:00Z,60,count/min,Band
            heart-rate,2024-03-05T10:15:00Z,2024-03-05T10:15:00Z,62,count/min,Band
            heart-rate,2024-03-05T10:25:00Z,2024-03-05T10:25:00Z,64,count/min,Band
            heart-rate,2024-03-05T10:35:00Z,2024-03-05T10:35:00Z,66,count/min,Band
            heart-rate,2024-03-06T09:30:00Z,2024-03-06T09:30:00Z,90,count/min,Band
            heart-rate,2024-03-07T09:10:00Z,2024-03-07T09:10:00Z,70,count/min,Band
            heart-rate,2024-03-07T09:20:00Z,2024-03-07T09:20:00Z,75,count/min,Band
            heart-rate,2024-03-07T09:30:00Z,2024-03-07T09:30:00Z,80,count/min,Band

            """)], timeZone: Self.utc)
        let hourly = try s.lines.export([.heart], from: nil, to: nil, granularity: .hourly).lines(.heart)
        // 03-05: 08:00 (one reading) withheld, and 09:00 (three, the fewest of the rest) with it;
        // 10:00 has four: average 63, min 60, max 66. 03-06: one reading, withheld, nothing else
        // that day. 03-07: one hour of three: its average alone.
        #expect(hourly.map { $0["period"] as! String } == ["2024-03-05T10", "2024-03-07T09"])
        #expect(hourly[0]["value"] as? NSNumber == 63 && hourly[0]["min"] as? NSNumber == 60 && hourly[0]["max"] as? NSNumber == 66
                && hourly[0]["samples"] as? NSNumber == 4)
        #expect(hourly[1]["value"] as? NSNumber == 75 && hourly[1]["min"] == nil && hourly[1]["max"] == nil && hourly[1]["samples"] as? NSNumber == 3)
        let daily = try s.lines.export([.heart], from: nil, to: nil, granularity: .daily).lines(.heart)
        let byDay = Dictionary(uniqueKeysWithValues: daily.map { ($0["period"] as! String, $0) })
        #expect(byDay["2024-03-05"]?["min"] as? NSNumber == 60 && byDay["2024-03-05"]?["max"] as? NSNumber == 80
                && byDay["2024-03-05"]?["samples"] as? NSNumber == 8)
        #expect(byDay["2024-03-06"]?["samples"] as? NSNumber == 1 && byDay["2024-03-06"]?["min"] == nil && byDay["2024-03-06"]?["max"] == nil)
        #expect(byDay["2024-03-07"]?["samples"] as? NSNumber == 3 && byDay["2024-03-07"]?["min"] == nil && byDay["2024-03-07"]?["max"] == nil)
    }

    @Test func recipientNamesThatLookAlikeOrHideCharactersAreRefused() throws {
        let s = try Shared()
        let pub = s.lines.key + ".pub"
        #expect(throws: VaultError.recipientLookalike(name: "LAB", existing: "lab")) { try s.t.vault.addRecipient(name: "LAB", publicKeyFile: pub) }
        #expect(throws: VaultError.recipientLookalike(name: "1аb", existing: "lab")) { try s.t.vault.addRecipient(name: "1аb", publicKeyFile: pub) }
        #expect(throws: VaultError.recipientLookalike(name: "ｌａｂ", existing: "lab")) { try s.t.vault.addRecipient(name: "ｌａｂ", publicKeyFile: pub) }
        #expect(throws: VaultError.invalidConsent(reason: "a recipient name may not hold control, invisible or direction-changing characters")) {
            try s.t.vault.addRecipient(name: "la\u{200B}b", publicKeyFile: pub)
        }
        // "SIeep" (capital I) against "Sleep": found in review.
        try s.t.vault.addRecipient(name: "Sleep Lab", publicKeyFile: pub)
        #expect(throws: VaultError.recipientLookalike(name: "SIeep Lab", existing: "Sleep Lab")) { try s.t.vault.addRecipient(name: "SIeep Lab", publicKeyFile: pub) }
        // A Latin tone-six for the b, and dashes of every kind for the space (issue 35's review).
        for lookalike in ["Sleep La\u{0185}", "Sleep\u{2010}Lab", "Sleep\u{2013}Lab", "Sleep\u{2212}Lab", "Sleep La\u{044C}"] {
            #expect(throws: VaultError.recipientLookalike(name: lookalike, existing: "Sleep Lab")) { try s.t.vault.addRecipient(name: lookalike, publicKeyFile: pub) }
        }
        try s.t.vault.addRecipient(name: "lab 2", publicKeyFile: pub)
        #expect(try s.t.vault.consentLedger().recipients.keys.sorted() == ["Sleep Lab", "lab", "lab 2"])
    }

    @Test func aGrantThatHasAlreadyExpiredIsRefused() throws {
        let s = try Shared()
        let now = Date(timeIntervalSince1970: 1_735_689_600)  // 2025-01-01T00:00:00Z
        #expect(throws: VaultError.invalidConsent(reason: "--expires 2024-12-30 is already past: the consent would never be in force")) {
            try s.t.vault.grant(recipient: "lab", categories: [.activity], from: nil, to: nil, granularity: .daily,
                                expires: LocalDay(year: 2024, month: 12, day: 30), purpose: nil, now: now)
        }
        #expect(try s.t.vault.consentLedger().changes.isEmpty)
    }

    @Test func aSparseIdentityFileCannotForceAHugeAllocation() throws {
        let t = try ImportTestVault()
        let path = t.path + "/identity.sealed"
        var header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(SealedSnapshot.headerSize))
        // Claim 8 GiB of plaintext and make the (sparse) file that long.
        let length = UInt64(8) << 30
        for k in 0..<8 { header[SealedSnapshot.headerSize - 8 + k] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(k))) }
        try Data(header).write(to: URL(fileURLWithPath: path))
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(SealedSnapshot.headerSize) + length + 16)
        try handle.close()
        #expect(throws: VaultError.identityDamaged) { try t.vault.identity() }
    }
}
