import Foundation
import HealthModel
import Importers
import VaultEvents

/// One request's body, read into events before it reaches the writer (so that parsing runs on
/// the server's threads, in parallel, and the writer only encodes and commits).
public final class CompanionPost: ImportSink {
    /// The paired app the post came from.
    public let app: String
    /// The hash of the token it came with: the post is written only while that token is the
    /// app's (not one revoked, even if the name was paired again since).
    let tokenHash: [UInt8]
    private(set) var events: [(event: VaultEvent, nested: Bool)] = []
    public private(set) var rejected = 0
    /// Why entries were rejected (no values).
    public private(set) var warnings: [String] = []

    /// Reads `body` (either companion shape) as coming from `app` with `token`. Throws
    /// `ImportError` when the body is not JSON or in neither shape; nothing of it is kept then.
    public init(app: String, token: String, body: Data, timeZone: TimeZone) throws {
        self.app = app
        tokenHash = CompanionRegistry.hash(token)
        try CompanionJSONImporter(sink: self, timeZone: timeZone, app: app).importBody(body, name: "body")
    }

    /// Samples and workouts the post holds.
    public var count: Int { events.count }

    /// The latest end per metric among the post's samples.
    var latestEnds: [String: HealthTimestamp] {
        var latest: [String: HealthTimestamp] = [:]
        for (event, _) in events {
            guard case .sample(let s) = event else { continue }
            if latest[s.type].map({ $0.seconds < s.end.seconds }) ?? true { latest[s.type] = s.end }
        }
        return latest
    }

    public func add(_ event: VaultEvent, nested: Bool) throws { events.append((event, nested)) }
    public func reject(_ count: Int) { rejected += count }
    public func warn(_ message: String) { warnings.append(message) }
}

/// What a post did: the 201 body.
public struct CompanionPostOutcome: Codable, Equatable, Sendable {
    public var added = 0
    public var replaced = 0
    public var duplicates = 0
    public var rejected = 0
    /// Entries of a category and month the person erased: refused, so that erased data does not
    /// come back.
    public var erased = 0

    public init(added: Int = 0, replaced: Int = 0, duplicates: Int = 0, rejected: Int = 0, erased: Int = 0) {
        self.added = added
        self.replaced = replaced
        self.duplicates = duplicates
        self.rejected = rejected
        self.erased = erased
    }

    /// The response's JSON, keys sorted, as `JSONEncoder` with `.sortedKeys` writes it (the
    /// encoder took 2 % of the server's CPU under `wrk`; a test holds the two to the same bytes).
    public var json: String {
        #"{"added":\#(added),"duplicates":\#(duplicates),"erased":\#(erased),"rejected":\#(rejected),"replaced":\#(replaced)}"#
    }
}
