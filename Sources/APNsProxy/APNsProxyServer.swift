import Foundation
import Ledger
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// How the proxy listens and where it sends.
public struct APNsProxyConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port.
    public var port: Int
    public var upstream: APNsUpstream
    /// A PEM file of CA certificates trusted for the upstream besides the system's.
    public var upstreamCA: String?
    /// PEM certificate chain and key: TLS with ALPN h2. Without them: cleartext HTTP/2 with prior knowledge (h2c),
    /// for a sidecar on loopback.
    public var certificate: String?
    public var privateKey: String?
    public var recorder: APNsRecorder.Configuration
    /// How long a push waits for APNs' answer before the caller gets a 502.
    public var upstreamTimeout: Duration
    /// How long a push's body may take after its headers (serve's `--body-timeout`); then the caller gets 408 and
    /// its stream is reset, with nothing sent upstream. Zero: no limit.
    public var bodyTimeout: Duration

    public init(
        host: String = "127.0.0.1", port: Int, upstream: APNsUpstream = .production, upstreamCA: String? = nil,
        certificate: String? = nil, privateKey: String? = nil, recorder: APNsRecorder.Configuration = .init(),
        upstreamTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.upstream = upstream
        self.upstreamCA = upstreamCA
        self.certificate = certificate
        self.privateKey = privateKey
        self.recorder = recorder
        self.upstreamTimeout = upstreamTimeout
        self.bodyTimeout = bodyTimeout
    }
}

/// The APNs proxy's services: the recorder, then the HTTP/2 server. Run them in the service's group after the
/// store and before the HTTP API, so that on shutdown the proxy stops answering first, the recorder drains, and
/// only then the store shuts down.
///
/// The server is NIO's HTTP/2 on NIO's event loops, without an HTTP framework or Swift tasks on the push's path:
/// a push is read, checked, forwarded on the upstream connection of its own event loop and answered there, so it
/// never changes threads (README "APNs proxy", BENCHMARKS "Session 15"). Only a key missing from the key cache
/// is looked up on NIO's blocking pool, and recording runs off the loops (``APNsRecorder``).
public struct APNsProxy: Sendable {
    public let recorder: APNsRecorder
    public let server: any Service

    public init(
        configuration: APNsProxyConfiguration, ledger: Ledger, keys: APIKeyCache, metrics: APNsProxyMetrics,
        logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws(APNsProxyError) {
        let group = MultiThreadedEventLoopGroup.singleton
        let upstream = try UpstreamConnections(
            upstream: configuration.upstream, extraCA: configuration.upstreamCA, group: group,
            timeout: TimeAmount(configuration.upstreamTimeout))
        let recorder = try APNsRecorder(
            ledger: ledger, metrics: metrics, configuration: configuration.recorder, logger: logger)
        let tls: NIOSSLContext?
        switch (configuration.certificate, configuration.privateKey) {
        case (nil, nil):
            tls = nil
        case (let certificate?, let key?):
            tls = try Self.tls(certificate: certificate, key: key)
        default:
            throw APNsProxyError(.configuration, "--apns-proxy-cert and --apns-proxy-key go together")
        }
        self.recorder = recorder
        self.server = ProxyServer(
            host: configuration.host, port: configuration.port, group: group, tls: tls, upstream: upstream,
            shared: ProxyStreamHandler.Shared(
                keys: keys, recorder: recorder, metrics: metrics, logger: logger,
                bodyTimeout: configuration.bodyTimeout > .zero ? TimeAmount(configuration.bodyTimeout) : nil),
            onServerRunning: onServerRunning)
    }

    static func tls(certificate: String, key: String) throws(APNsProxyError) -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        let privateKey: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw APNsProxyError(.configuration, "--apns-proxy-cert: cannot read a PEM certificate from \(certificate)")
        }
        guard !chain.isEmpty else { throw APNsProxyError(.configuration, "--apns-proxy-cert: no certificate in \(certificate)") }
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw APNsProxyError(.configuration, "--apns-proxy-key: cannot read a PEM private key from \(key)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        // APNs speaks HTTP/2 only; so does its stand-in.
        configuration.applicationProtocols = ["h2"]
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw APNsProxyError(.configuration, "--apns-proxy-cert/--apns-proxy-key: \(error)")
        }
    }
}

/// The listening socket and its connections. On graceful shutdown it stops accepting, asks every connection to
/// quiesce (HTTP/2 GOAWAY: streams in flight are answered, no new ones start), waits for them to close, then closes
/// the upstream connections.
struct ProxyServer: Service {
    let host: String
    let port: Int
    let group: MultiThreadedEventLoopGroup
    let tls: NIOSSLContext?
    let upstream: UpstreamConnections
    let shared: ProxyStreamHandler.Shared
    let onServerRunning: @Sendable (Int) async -> Void

    /// A connection idle for an hour is closed (APNs does the same); at shutdown, streams in flight get 30 s.
    static let connectionManagement = NIOHTTP2ServerConnectionManagementHandler.Configuration(
        maxIdleTime: .hours(1), maxAge: nil, maxGraceTime: .seconds(30), keepalive: nil)

    func run() async throws {
        let connections = OpenConnections()
        let (tls, upstream, shared) = (self.tls, self.upstream, self.shared)
        let server: any Channel
        do {
            server = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        connections.add(channel)
                        let sync = channel.pipeline.syncOperations
                        if let tls { try sync.addHandler(NIOSSLServerHandler(context: tls)) }
                        let manager = NIOHTTP2ServerConnectionManagementHandler(
                            eventLoop: channel.eventLoop, configuration: Self.connectionManagement)
                        _ = try sync.configureHTTP2Pipeline(
                            mode: .server, connectionConfiguration: .init(), streamConfiguration: .init(),
                            streamDelegate: manager.http2StreamDelegate,
                            inboundStreamInitializer: { stream in
                                stream.eventLoop.makeCompletedFuture {
                                    try stream.pipeline.syncOperations.addHandler(
                                        ProxyStreamHandler(shared: shared, upstream: upstream.connection(on: stream.eventLoop)))
                                }
                            })
                        try sync.addHandler(manager)
                    }
                }
                .bind(host: host, port: port).get()
        } catch {
            await upstream.shutdown()
            throw APNsProxyError(.configuration, "--apns-proxy-port: cannot listen on \(host):\(port) (\(error))")
        }
        await onServerRunning(server.localAddress?.port ?? port)
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                try? await server.closeFuture.get()
            } onCancel: {
                server.close(promise: nil)
            }
        } onGracefulShutdown: {
            server.close(promise: nil)
        }
        server.close(promise: nil)
        // GOAWAY on each connection: its streams in flight are answered (for at most `maxGraceTime`), then it closes.
        for channel in connections.all() {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        for channel in connections.all() { try? await channel.closeFuture.get() }
        await upstream.shutdown()
    }
}

/// The proxy's open client connections, for quiescing them at shutdown.
final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { _ in _ = self.channels.withLock { $0.removeValue(forKey: id) } }
    }

    func all() -> [any Channel] { channels.withLock { Array($0.values) } }
}
