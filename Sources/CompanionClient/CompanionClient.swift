import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// An HTTP/1.1 client of the companion endpoint over SwiftNIO (NIOHTTP1 parses, NIOSSL encrypts),
/// for the server's tests and its load benchmark: one keep-alive connection, one request at a
/// time, the server's certificate pinned by its SHA-256 as a paired phone does.
///
/// Calls block the calling thread until NIO's threads answer (never call them on an event loop):
/// tests and benchmark threads then do not depend on Swift's cooperative pool, which other tests
/// may be holding.
public final class CompanionClient: @unchecked Sendable {
    /// What the server answered.
    public struct Response: Sendable {
        public var status: Int
        public var body: String
    }

    private let channel: Channel
    private let handler: ResponseHandler
    private let host: String

    /// Connects to `host:port`; with `pinnedSHA256` over TLS, refusing any other certificate.
    public init(host: String, port: Int, pinnedSHA256: String?, group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        let handler = ResponseHandler()
        var tlsContext: NIOSSLContext?
        if pinnedSHA256 != nil {
            var configuration = TLSConfiguration.makeClientConfiguration()
            // Verification runs (the callback below replaces the chain check); the name is not checked:
            // the pin says which server this is.
            configuration.certificateVerification = .noHostnameVerification
            tlsContext = try NIOSSLContext(configuration: configuration)
        }
        let pin = pinnedSHA256
        channel = try ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext, let pin {
                        let tls = try NIOSSLClientHandler(context: tlsContext, serverHostname: nil) { certificates, promise in
                            let presented = (try? certificates.first?.toDERBytes()).map { SHA256.hash(data: $0).map { String(format: "%02x", $0) }.joined() }
                            promise.succeed(presented == pin ? .certificateVerified : .failed)
                        }
                        try channel.pipeline.syncOperations.addHandler(tls)
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(host: host, port: port).wait()
        self.handler = handler
        self.host = host
    }

    /// Sends one request and waits for its whole response.
    public func send(_ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws -> Response {
        let promise = channel.eventLoop.makePromise(of: Response.self)
        let host = self.host
        let handler = self.handler
        let channel = self.channel
        channel.eventLoop.execute {
            handler.expect(promise)
            guard handler.isOpen else { return }
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
            head.headers.add(name: "Host", value: host)
            for (name, value) in headers { head.headers.add(name: name, value: value) }
            if let body { head.headers.add(name: "Content-Length", value: String(body.count)) }
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
            let written = channel.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenFailure { handler.fail($0) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: written)
        }
        return try promise.futureResult.wait()
    }

    /// `POST path` with a JSON body and a bearer token.
    public func post(_ path: String, token: String?, json: String, headers: [(String, String)] = []) throws -> Response {
        var all = headers + [("Content-Type", "application/json")]
        if let token { all.append(("Authorization", "Bearer " + token)) }
        return try send(.POST, path, headers: all, body: Array(json.utf8))
    }

    public func close() {
        try? channel.close().wait()
    }

    /// Gathers one response at a time and fails the waiting request when the connection ends.
    final class ResponseHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        private var waiting: EventLoopPromise<Response>?
        private var status = 0
        private var body = ByteBuffer()
        /// Until the connection ends; a request after that fails at once.
        private(set) var isOpen = true

        /// Waits for the next response (on the event loop); fails at once on a closed connection.
        func expect(_ promise: EventLoopPromise<Response>) {
            guard isOpen else {
                promise.fail(ChannelError.ioOnClosedChannel)
                return
            }
            waiting = promise
            status = 0
            body.clear()
        }

        func fail(_ error: Error) {
            waiting?.fail(error)
            waiting = nil
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): status = Int(head.status.code)
            case .body(var part): body.writeBuffer(&part)
            case .end:
                let response = Response(status: status, body: String(buffer: body))
                waiting?.succeed(response)
                waiting = nil
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            waiting?.fail(error)
            waiting = nil
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            isOpen = false
            waiting?.fail(ChannelError.ioOnClosedChannel)
            waiting = nil
        }
    }
}
