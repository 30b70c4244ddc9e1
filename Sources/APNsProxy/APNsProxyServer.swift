import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Ledger
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// How the proxy listens and where it sends.
public struct APNsProxyConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port.
    public var port: Int
    public var upstream: APNsUpstream
    /// A PEM file of CA certificates trusted for the upstream besides the system's.
    public var upstreamCA: String?
    /// PEM certificate chain and key: TLS with ALPN h2 (and http/1.1). Without them: cleartext HTTP/2 with prior
    /// knowledge (h2c), for a sidecar on loopback.
    public var certificate: String?
    public var privateKey: String?
    public var recorder: APNsRecorder.Configuration

    public init(
        host: String = "127.0.0.1", port: Int, upstream: APNsUpstream = .production, upstreamCA: String? = nil,
        certificate: String? = nil, privateKey: String? = nil, recorder: APNsRecorder.Configuration = .init()
    ) {
        self.host = host
        self.port = port
        self.upstream = upstream
        self.upstreamCA = upstreamCA
        self.certificate = certificate
        self.privateKey = privateKey
        self.recorder = recorder
    }
}

/// The APNs proxy's services: the recorder, then the HTTP/2 server. Run them in the service's group after the
/// store and before the HTTP API, so that on shutdown the proxy stops answering first, the recorder drains, and
/// only then the store shuts down.
public struct APNsProxy: Sendable {
    public let recorder: APNsRecorder
    public let server: any Service
    public let client: APNsClient

    public init(
        configuration: APNsProxyConfiguration, ledger: Ledger, keys: APIKeyCache, metrics: APNsProxyMetrics,
        logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws(APNsProxyError) {
        let client = try APNsClient(upstream: configuration.upstream, extraCA: configuration.upstreamCA)
        let recorder = try APNsRecorder(
            ledger: ledger, metrics: metrics, configuration: configuration.recorder, logger: logger)
        let responder = APNsProxyResponder(keys: keys, client: client, recorder: recorder, metrics: metrics)
        let server: HTTPServerBuilder
        switch (configuration.certificate, configuration.privateKey) {
        case (nil, nil):
            server = .plaintextHTTP2()
        case (let certificate?, let key?):
            let tls = try Self.tls(certificate: certificate, key: key)
            do {
                server = try .http2Upgrade(tlsConfiguration: tls)
            } catch {
                throw APNsProxyError(.configuration, "--apns-proxy-cert/--apns-proxy-key: \(error)")
            }
        default:
            throw APNsProxyError(.configuration, "--apns-proxy-cert and --apns-proxy-key go together")
        }
        let application = Application(
            responder: responder, server: server,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "activity-ledger-apns"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
        self.recorder = recorder
        self.server = ProxyServerService(application: application, client: client)
        self.client = client
    }

    static func tls(certificate: String, key: String) throws(APNsProxyError) -> TLSConfiguration {
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
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
    }
}

/// The proxy's HTTP/2 server; closes the upstream connections once it has stopped.
struct ProxyServerService<App: ApplicationProtocol>: Service {
    let application: App
    let client: APNsClient

    func run() async throws {
        do {
            try await application.run()
        } catch {
            try? await client.shutdown()
            throw error
        }
        try? await client.shutdown()
    }
}
