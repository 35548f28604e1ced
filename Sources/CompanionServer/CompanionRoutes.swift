import Foundation
import HTTPTypes
import HealthModel
import Hummingbird
import Logging
import NIOCore
import Vault

/// The endpoints of docs/companion.md: `POST /companion/health`, `GET /companion/anchor`,
/// `GET /healthz`.
struct CompanionRoutes: Sendable {
    let queue: CommitQueue
    let limits: CompanionServer.Limits
    let rates = RateLimiter()

    static let apiKey = HTTPField.Name("X-API-Key")!
    static let timeZoneHeader = HTTPField.Name("X-Timezone")!

    func install(on router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in Self.json(.ok, #"{"ok":true}"#) }
        router.post("/companion/health") { request, context in try await post(request, context) }
        router.get("/companion/anchor") { request, context in try await anchor(request, context) }
    }

    private func post(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        guard let app = await authenticate(request) else { return Self.error(.unauthorized, "missing, unknown or revoked token") }
        guard rates.allow(app.name, perSecond: limits.postsPerSecond, burst: limits.burst) else {
            return Self.error(.tooManyRequests, "too many posts from this app; retry in a second")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limits.maxBody {
            return Self.error(.contentTooLarge, "body larger than \(limits.maxBody) bytes")
        }
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: limits.maxBody)
        } catch {
            return Self.error(.contentTooLarge, "body larger than \(limits.maxBody) bytes")
        }
        var timeZone = TimeZone.current
        if let name = request.headers[Self.timeZoneHeader] {
            guard let zone = TimeZone(identifier: name) else { return Self.error(.badRequest, "X-Timezone is not a time zone name (Europe/Berlin)") }
            timeZone = zone
        }
        let parsed: CompanionPost
        do {
            parsed = try CompanionPost(app: app.name, token: app.token, body: Data(buffer: body), timeZone: timeZone)
        } catch let error as ImportError {
            return Self.error(.badRequest, error.description)
        }
        guard parsed.count <= limits.maxRecords else { return Self.error(.contentTooLarge, "more than \(limits.maxRecords) entries in one post") }
        let result = await withCheckedContinuation { queue.submit(.post(parsed, $0)) }
        switch result {
        case .success(nil):
            return Self.error(.unauthorized, "missing, unknown or revoked token")
        case .success(let outcome?):
            return Self.json(.created, outcome.json)
        case .failure(let error):
            return Self.failure(error, context.logger)
        }
    }

    private func anchor(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        guard let app = await authenticate(request) else { return Self.error(.unauthorized, "missing, unknown or revoked token") }
        guard let metric = request.uri.queryParameters.get("metric"), !metric.isEmpty else {
            return Self.error(.badRequest, "give ?metric=NAME")
        }
        guard let type = CompanionJSONImporter.quantityTypeIdentifier(metric) else { return Self.error(.badRequest, "unknown metric") }
        let result = await withCheckedContinuation { queue.submit(.anchor(token: app.token, metric: type, $0)) }
        switch result {
        case .success(nil):
            return Self.error(.unauthorized, "missing, unknown or revoked token")
        case .success(let through?):
            let object: [String: Any] = ["metric": metric, "through": through.map { $0.iso8601 as Any } ?? NSNull()]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            return Self.json(.ok, String(decoding: data, as: UTF8.self))
        case .failure(let error):
            return Self.failure(error, context.logger)
        }
    }

    /// The 503 of a failed commit or read: a fixed message (no path, no value), the error's type
    /// in the log.
    static func failure(_ error: Error, _ logger: Logger) -> Response {
        switch error {
        case let busy as CommitQueue.Busy: return Self.error(.serviceUnavailable, busy.description)
        case let stopped as CompanionIngest.Stopped:
            logger.error("\(stopped.description)")
            return Self.error(.serviceUnavailable, stopped.description)
        default:
            logger.error("a commit failed: \(String(describing: type(of: error)))")
            return Self.error(.serviceUnavailable, "the vault could not confirm this post; send it again (a repeat counts as a duplicate)")
        }
    }

    /// The paired app whose token the request carries (`Authorization: Bearer` or `X-API-Key`):
    /// checked against the registry of the last commit, and when unknown there, against the
    /// vault's (an app paired since), at most 20 such lookups a second for all unknown tokens
    /// together (more are refused at once).
    private func authenticate(_ request: Request) async -> (name: String, token: String)? {
        var token: String?
        if let authorization = request.headers[.authorization], authorization.utf8.count >= 7,
           authorization.utf8.prefix(7).elementsEqual("bearer ".utf8, by: { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }) {
            token = Self.trimmingHTTPSpace(authorization.utf8.dropFirst(7))
        } else if let key = request.headers[Self.apiKey] {
            token = Self.trimmingHTTPSpace(key.utf8[...])
        }
        guard let token, !token.isEmpty, token.utf8.count <= 256 else { return nil }
        if let app = queue.registry.app(forToken: token) { return (app.name, token) }
        guard rates.allow("", perSecond: 20, burst: 40) else { return nil }
        guard let name = await withCheckedContinuation({ queue.submit(.checkToken(token, $0)) }) else { return nil }
        return (name, token)
    }

    /// A header value without the spaces and tabs HTTP allows around it (RFC 9110's OWS), trimmed
    /// among its bytes: Foundation's `trimmingCharacters(in:)` took 2 % of the server's CPU.
    static func trimmingHTTPSpace(_ value: Substring.UTF8View) -> String {
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 }
        guard let first = value.firstIndex(where: { !isSpace($0) }), let last = value.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(Substring(value[first...last]))
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: ["error": message], options: [.sortedKeys])) ?? Data("{}".utf8)
        return json(status, String(decoding: data, as: UTF8.self))
    }
}

/// Posts per second per paired app: a token bucket each.
final class RateLimiter: @unchecked Sendable {
    private let lock = NSLock()
    private var buckets: [String: (tokens: Double, at: Double)] = [:]

    func allow(_ key: String, perSecond rate: Double, burst: Double) -> Bool {
        let now = Date().timeIntervalSinceReferenceDate
        lock.lock()
        defer { lock.unlock() }
        var bucket = buckets[key] ?? (burst, now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.at) * rate)
        bucket.at = now
        guard bucket.tokens >= 1 else {
            buckets[key] = bucket
            return false
        }
        bucket.tokens -= 1
        buckets[key] = bucket
        return true
    }
}
