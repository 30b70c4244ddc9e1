import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// APNs' answer to a proxied push as it came: status, regular headers (lower-case names) and body.
struct UpstreamAnswer: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: ByteBuffer

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// Where the proxy's pushes go, and how: one HTTP/2 connection over TLS (ALPN h2) per event loop, opened when the
/// first push on that loop needs it and again after it closes (APNs closes idle connections; a GOAWAY or a reset
/// ends one). A push is forwarded on the upstream connection of the event loop its caller's connection is on, so
/// that it never changes threads: the caller's stream, the upstream stream and the answer all run on one loop.
/// Pushes beyond the peer's concurrent-stream limit wait in NIOHTTP2's buffer for a stream to close.
final class UpstreamConnections: Sendable {
    let authority: String
    private let target: UpstreamConnection.Target
    /// Each loop's connection, made on that loop the first time a push there needs it.
    private let connections: [ObjectIdentifier: NIOLoopBoundBox<UpstreamConnection?>]

    /// - Parameters:
    ///   - group: the event loops the proxy's server runs on; one connection each.
    ///   - extraCA: a PEM file of certificates trusted besides the system's (a test's CA).
    init(upstream: APNsUpstream, extraCA: String?, group: any EventLoopGroup, timeout: TimeAmount) throws(APNsProxyError) {
        guard let url = URL(string: upstream.baseURL), let host = url.host else {
            throw APNsProxyError(.configuration, "--apns-upstream: cannot parse \(upstream.baseURL)")
        }
        let port = url.port ?? 443
        authority = url.port == nil ? host : "\(host):\(port)"
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        tls.additionalTrustRoots = try APNsClient.trustRoots(extraCA)
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw APNsProxyError(.configuration, "--apns-upstream: cannot set up TLS (\(error))")
        }
        // SNI takes a host name, never an IP literal; NIOSSL then checks the certificate against the peer's address.
        let sniHost = IPAddressLiteral.isLiteral(host) ? nil : host
        let target = UpstreamConnection.Target(
            host: host, port: port, authority: authority, sniHost: sniHost, tls: context, timeout: timeout)
        self.target = target
        var connections: [ObjectIdentifier: NIOLoopBoundBox<UpstreamConnection?>] = [:]
        for loop in group.makeIterator() {
            connections[ObjectIdentifier(loop)] = .makeEmptyBox(valueType: UpstreamConnection.self, eventLoop: loop)
        }
        self.connections = connections
    }

    /// The connection of `eventLoop`; call on that loop. Nil for a loop outside the group.
    func connection(on eventLoop: any EventLoop) -> UpstreamConnection? {
        guard let box = connections[ObjectIdentifier(eventLoop)] else { return nil }
        if let connection = box.value { return connection }
        let connection = UpstreamConnection(target: target, eventLoop: eventLoop)
        box.value = connection
        return connection
    }

    /// Closes every open connection.
    func shutdown() async {
        var closing: [EventLoopFuture<Void>] = []
        for box in connections.values {
            let loop = box.eventLoop
            closing.append(loop.flatSubmit { box.value?.close() ?? loop.makeSucceededVoidFuture() })
        }
        for future in closing { try? await future.get() }
    }
}

/// One event loop's upstream connection; used on that loop only.
final class UpstreamConnection {
    struct Target: Sendable {
        var host: String
        var port: Int
        var authority: String
        var sniHost: String?
        var tls: NIOSSLContext
        var timeout: TimeAmount
    }

    private enum State {
        case idle
        case connecting(EventLoopFuture<Open>)
        case open(Open)
    }

    private struct Open {
        var channel: any Channel
        var multiplexer: NIOHTTP2Handler.StreamMultiplexer
    }

    let target: Target
    let eventLoop: any EventLoop
    private var state = State.idle
    /// The last error the current (or last) connection raised, until a new one opens.
    private var connectionError: (any Error)?

    init(target: Target, eventLoop: any EventLoop) {
        self.target = target
        self.eventLoop = eventLoop
    }

    /// Sends one push: `path`, `headers` (regular ones, lower-case) and `body`; the answer, or the error that
    /// left none (no connection, the stream reset, no answer within the timeout).
    func send(path: String, headers: [(name: String, value: String)], body: ByteBuffer) -> EventLoopFuture<UpstreamAnswer> {
        eventLoop.preconditionInEventLoop()
        var block = HPACKHeaders()
        block.reserveCapacity(headers.count + 4)
        block.add(name: ":method", value: "POST")
        block.add(name: ":scheme", value: "https")
        block.add(name: ":authority", value: target.authority)
        block.add(name: ":path", value: path)
        for header in headers { block.add(name: header.name, value: header.value) }
        let request = UpstreamRequest(headers: block, body: body)
        let answer = eventLoop.makePromise(of: UpstreamAnswer.self)
        start(request, answer: answer, retry: true)
        // A stream only sees its connection close; what closed it (a TLS failure, say) is told with it.
        return answer.futureResult.assumeIsolated().flatMapErrorThrowing { error in
            let message = (error as? APNsProxyError)?.message ?? "\(error)"
            throw APNsProxyError(.upstream, message + (self.connectionError.map { " (\($0))" } ?? ""))
        }.nonisolated()
    }

    /// Opens a stream for `request`. When no stream could be opened on a connection that was open (it closed or
    /// went away meanwhile), nothing was sent: it is tried once more on a new connection.
    private func start(_ request: UpstreamRequest, answer: EventLoopPromise<UpstreamAnswer>, retry: Bool) {
        let timeout = target.timeout
        open().assumeIsolated().whenComplete { result in
            switch result {
            case .failure(let error):
                answer.fail(error)
            case .success(let open):
                let created = self.eventLoop.makePromise(of: (any Channel).self)
                open.multiplexer.createStreamChannel(promise: created) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(
                            UpstreamStreamHandler(request: request, answer: answer, timeout: timeout))
                    }
                }
                created.futureResult.assumeIsolated().whenFailure { error in
                    guard retry else { return answer.fail(error) }
                    self.retire(open.channel)
                    self.start(request, answer: answer, retry: false)
                }
            }
        }
    }

    /// No new streams on `channel` (APNs sent GOAWAY, or a stream could not be opened on it): later pushes open a
    /// new connection; the streams in flight finish within the timeout, then it is closed.
    private func retire(_ channel: any Channel) {
        guard case .open(let current) = state, current.channel === channel else { return }
        state = .idle
        channel.eventLoop.scheduleTask(in: target.timeout) { channel.close(promise: nil) }
    }

    private func open() -> EventLoopFuture<Open> {
        switch state {
        case .open(let open) where open.channel.isActive:
            return eventLoop.makeSucceededFuture(open)
        case .connecting(let future):
            return future
        case .idle, .open:
            break
        }
        let target = self.target
        let connection = NIOLoopBound(self, eventLoop: eventLoop)
        let multiplexer = eventLoop.makePromise(of: NIOHTTP2Handler.StreamMultiplexer.self)
        let connected = ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: target.tls, serverHostname: target.sniHost))
                    let configured = try sync.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: .init(), streamConfiguration: .init(),
                        // APNs opens no streams (no server push); any it did would be refused.
                        inboundStreamInitializer: { stream in stream.close() })
                    try sync.addHandler(
                        ConnectionWatcher(
                            onGoAway: { connection.value.retire(channel) },
                            onError: { connection.value.connectionError = $0 }))
                    multiplexer.succeed(configured)
                }
            }
            .connect(host: target.host, port: target.port)
        connected.whenFailure { multiplexer.fail($0) }
        let opened = connected.and(multiplexer.futureResult).map { Open(channel: $0.0, multiplexer: $0.1) }
        state = .connecting(opened)
        connectionError = nil
        opened.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let open):
                self.state = .open(open)
                open.channel.closeFuture.assumeIsolated().whenComplete { _ in
                    if case .open(let current) = self.state, current.channel === open.channel { self.state = .idle }
                }
            case .failure:
                self.state = .idle
            }
        }
        return opened
    }

    func close() -> EventLoopFuture<Void> {
        switch state {
        case .open(let open):
            state = .idle
            return open.channel.close().recover { _ in }
        case .connecting(let future):
            return future.flatMap { $0.channel.close() }.recover { _ in }
        case .idle:
            return eventLoop.makeSucceededVoidFuture()
        }
    }
}

/// Tells its connection when the peer sends GOAWAY (connection-level frames pass the HTTP/2 handler) and what
/// error the connection raised; closes it on an error (NIOSSL and NIOHTTP2 have then given up on it already).
final class ConnectionWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let onGoAway: () -> Void
    private let onError: (any Error) -> Void

    init(onGoAway: @escaping () -> Void, onError: @escaping (any Error) -> Void) {
        self.onGoAway = onGoAway
        self.onError = onError
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway = unwrapInboundIn(data).payload { onGoAway() }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        onError(error)
        context.close(promise: nil)
    }
}

struct UpstreamRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer
}

/// One push on an upstream stream: writes the request when the stream opens, collects the answer (its body cut at
/// ``APNsClient/maxAnswerBytes``), and fails the promise if the stream ends, resets or times out without one.
final class UpstreamStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let request: UpstreamRequest
    private let answer: EventLoopPromise<UpstreamAnswer>
    private let timeout: TimeAmount
    private var status: Int?
    private var headers: [(name: String, value: String)] = []
    private var body = ByteBuffer()
    private var done = false
    private var deadline: Scheduled<Void>?

    init(request: UpstreamRequest, answer: EventLoopPromise<UpstreamAnswer>, timeout: TimeAmount) {
        self.request = request
        self.answer = answer
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard deadline == nil, !done else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = bound.value
            handler.finish(.failure(APNsProxyError(.upstream, "no answer within \(handler.timeout.nanoseconds / 1_000_000_000) s")))
            context.close(promise: nil)
        }
        let empty = request.body.readableBytes == 0
        context.write(wrapOutboundOut(.headers(.init(headers: request.headers, endStream: empty))), promise: nil)
        if !empty { context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(request.body), endStream: true))), promise: nil) }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let block):
            if status == nil {
                guard let code = block.headers.first(name: ":status").flatMap(Int.init) else {
                    finish(.failure(APNsProxyError(.upstream, "an answer without :status")))
                    context.close(promise: nil)
                    return
                }
                // An informational answer (1xx) is followed by the real one.
                guard code >= 200 else { return }
                status = code
                for header in block.headers where !header.name.hasPrefix(":") { headers.append((header.name, header.value)) }
            }
            // Later header blocks are trailers: APNs sends none, and none are returned.
            if block.endStream { complete() }
        case .data(let data):
            if case .byteBuffer(var bytes) = data.data, body.readableBytes < APNsClient.maxAnswerBytes {
                if let slice = bytes.readSlice(length: min(bytes.readableBytes, APNsClient.maxAnswerBytes - body.readableBytes)) {
                    body.writeImmutableBuffer(slice)
                }
            }
            if data.endStream { complete() }
        case .rstStream(let code):
            finish(.failure(APNsProxyError(.upstream, "the stream was reset (\(code))")))
        default:
            break
        }
    }

    private func complete() {
        guard let status else {
            finish(.failure(APNsProxyError(.upstream, "the stream ended without an answer")))
            return
        }
        finish(.success(UpstreamAnswer(status: status, headers: headers, body: body)))
    }

    private func finish(_ result: Result<UpstreamAnswer, any Error>) {
        guard !done else { return }
        done = true
        deadline?.cancel()
        answer.completeWith(result)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(APNsProxyError(.upstream, "the connection closed before the answer")))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.close(promise: nil)
    }
}

/// Whether a URL's host is an IPv4 or IPv6 literal.
enum IPAddressLiteral {
    static func isLiteral(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
