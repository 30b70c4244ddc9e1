import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// One request to APNs as it goes on the wire: the path, the headers and the body.
public struct APNsOutgoing: Sendable {
    /// `/3/device/<token>` or `/4/broadcasts/apps/<bundle>`.
    public var path: String
    /// Lower-case names, in the order they are sent.
    public var headers: [(name: String, value: String)]
    public var body: ByteBuffer

    public init(path: String, headers: [(name: String, value: String)], body: ByteBuffer) {
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// APNs' answer as it came: status, headers and body, untouched.
public struct APNsAnswer: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: ByteBuffer

    public init(status: Int, headers: [(name: String, value: String)], body: ByteBuffer) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of `name` (lower-case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

/// An HTTP/2 client for APNs over pooled TLS connections (async-http-client negotiates h2 by ALPN and multiplexes
/// requests over few connections). Shared by the proxy and `reconcile … --execute`.
public final class APNsClient: Sendable {
    public let upstream: APNsUpstream
    private let client: HTTPClient
    /// APNs answers within a second or two; a stuck connection must not hold a caller for ever.
    private let timeout: TimeAmount
    /// APNs error bodies are tiny; anything larger is cut off rather than buffered.
    static let maxAnswerBytes = 64 * 1024

    /// - Parameters:
    ///   - extraCA: a PEM file of certificates trusted for the upstream besides the system's (a test's CA).
    public init(upstream: APNsUpstream, extraCA: String? = nil, timeout: Duration = .seconds(30)) throws(APNsProxyError) {
        self.upstream = upstream
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = try Self.trustRoots(extraCA)
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(30)))
        configuration.httpVersion = .automatic
        configuration.connectionPool.idleTimeout = .seconds(600)
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = TimeAmount(timeout)
    }

    /// `extraCA`'s certificates as trust roots beside the system's (none without it); `--apns-ca`'s one reader.
    static func trustRoots(_ extraCA: String?) throws(APNsProxyError) -> [NIOSSLAdditionalTrustRoots] {
        guard let extraCA else { return [] }
        guard FileManager.default.isReadableFile(atPath: extraCA) else {
            throw APNsProxyError(.configuration, "--apns-ca: cannot read \(extraCA)")
        }
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(extraCA)
        } catch {
            throw APNsProxyError(.configuration, "--apns-ca: \(extraCA) is not a PEM certificate file (\(error))")
        }
        guard !certificates.isEmpty else { throw APNsProxyError(.configuration, "--apns-ca: no certificate in \(extraCA)") }
        return [.certificates(certificates)]
    }

    /// Sends `request` and returns APNs' answer; throws ``APNsProxyError`` (`upstream`) when there is none.
    public func send(_ request: APNsOutgoing) async throws(APNsProxyError) -> APNsAnswer {
        var outgoing = HTTPClientRequest(url: upstream.baseURL + request.path)
        outgoing.method = .POST
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        outgoing.body = .bytes(request.body)
        do {
            let response = try await client.execute(outgoing, timeout: timeout)
            let body = try await response.body.collect(upTo: Self.maxAnswerBytes)
            return APNsAnswer(
                status: Int(response.status.code),
                headers: response.headers.map { (name: $0.name.lowercased(), value: $0.value) }, body: body)
        } catch {
            throw APNsProxyError(.upstream, "\(upstream.baseURL): \(error)")
        }
    }

    /// Closes the pooled connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }
}
