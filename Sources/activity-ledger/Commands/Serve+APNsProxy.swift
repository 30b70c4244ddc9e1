import APNsProxy
import ArgumentParser
import Foundation

/// `serve`'s APNs proxy options (README "APNs proxy").
struct APNsProxyOptions: ParsableArguments {
    @Option(help: "Also serve the APNs provider API on this port (HTTP/2; 0: any free port), forwarding to --apns-upstream and recording every push.")
    var apnsProxyPort: Int?

    @Option(help: "Where the proxy forwards: production, sandbox or https://host[:port]. [default: production (https://api.push.apple.com)]")
    var apnsUpstream: String?

    @Option(help: "A PEM file of CA certificates to trust for the upstream besides the system's.")
    var apnsCa: String?

    @Option(help: "PEM certificate chain for the proxy: TLS with ALPN h2. Without it the proxy speaks cleartext HTTP/2 with prior knowledge (h2c).")
    var apnsProxyCert: String?

    @Option(help: "PEM private key for --apns-proxy-cert.")
    var apnsProxyKey: String?

    @Option(help: "Seconds a push to a token the ledger does not know yet is held, retried each second, before it is counted as unattributed. [default: 600]")
    var apnsProxyHold: Double?

    /// The proxy's configuration, nil without --apns-proxy-port; the other options alone are a usage error.
    func configuration(host: String) throws -> APNsProxyConfiguration? {
        guard let port = apnsProxyPort else {
            let stray = [
                apnsUpstream.map { _ in "--apns-upstream" }, apnsCa.map { _ in "--apns-ca" },
                apnsProxyCert.map { _ in "--apns-proxy-cert" }, apnsProxyKey.map { _ in "--apns-proxy-key" },
                apnsProxyHold.map { _ in "--apns-proxy-hold" },
            ].compactMap { $0 }
            if let first = stray.first { throw ValidationError("\(first) needs --apns-proxy-port") }
            return nil
        }
        guard (0...65535).contains(port) else { throw ValidationError("--apns-proxy-port must be 0…65535, got \(port)") }
        guard (apnsProxyCert == nil) == (apnsProxyKey == nil) else {
            throw ValidationError("--apns-proxy-cert and --apns-proxy-key go together")
        }
        for (flag, path) in [("--apns-ca", apnsCa), ("--apns-proxy-cert", apnsProxyCert), ("--apns-proxy-key", apnsProxyKey)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw ValidationError("\(flag): cannot read \(path)")
            }
        }
        var recorder = APNsRecorder.Configuration()
        if let hold = apnsProxyHold {
            guard hold.isFinite, (0...86_400).contains(hold) else {
                throw ValidationError("--apns-proxy-hold must be 0…86400 seconds, got \(hold)")
            }
            recorder.hold = .milliseconds(Int64((hold * 1000).rounded()))
        }
        let upstream: APNsUpstream
        do {
            upstream = try APNsUpstream(parsing: apnsUpstream ?? "production")
        } catch {
            throw ValidationError(error.message)
        }
        return APNsProxyConfiguration(
            host: host, port: port, upstream: upstream, upstreamCA: apnsCa, certificate: apnsProxyCert,
            privateKey: apnsProxyKey, recorder: recorder)
    }
}
