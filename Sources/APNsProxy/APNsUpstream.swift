import Foundation

/// Where pushes go: Apple's production or sandbox host, or any `https://` URL (a fake APNs in tests).
public struct APNsUpstream: Sendable, Hashable, CustomStringConvertible {
    /// `https://host[:port]`, no path.
    public let baseURL: String

    public static let production = APNsUpstream(checked: "https://api.push.apple.com")
    public static let sandbox = APNsUpstream(checked: "https://api.sandbox.push.apple.com")

    private init(checked baseURL: String) { self.baseURL = baseURL }

    /// `production`, `sandbox`, or an `https://host[:port]` URL (a trailing `/` is dropped).
    /// `http://` is refused: APNs speaks HTTP/2 over TLS only, and the JWT must not cross a network in clear.
    public init(parsing text: String) throws(APNsProxyError) {
        switch text {
        case "production": self = .production
        case "sandbox": self = .sandbox
        default:
            var trimmed = text
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            guard let url = URL(string: trimmed), url.scheme == "https", let host = url.host, !host.isEmpty,
                url.path.isEmpty, url.query == nil, url.user == nil
            else {
                throw APNsProxyError(
                    .configuration, "--apns-upstream: expected production, sandbox or https://host[:port], got '\(text)'")
            }
            self.baseURL = trimmed
        }
    }

    public var description: String { baseURL }
}
