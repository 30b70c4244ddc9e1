import Crypto
import Foundation
import Synchronization

/// The provider authentication token APNs takes in `authorization: bearer …`: a JWT signed ES256 with the team's
/// `.p8` key. APNs refuses a token older than an hour and throttles one refreshed more often than every 20 minutes,
/// so the token is made once and reused for 50 minutes.
public final class APNsTokenSigner: Sendable {
    private let key: P256.Signing.PrivateKey
    public let keyID: String
    public let teamID: String
    /// Seconds a token is reused.
    static let lifetime: Int64 = 50 * 60
    private let cached = Mutex<(token: String, issuedAt: Int64)?>(nil)

    public init(p8 path: String, keyID: String, teamID: String) throws(APNsProxyError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw APNsProxyError(.configuration, "--apns-key-file: cannot read \(path)")
        }
        let pem = String(decoding: data, as: UTF8.self)
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw APNsProxyError(.configuration, "--apns-key-file: \(path) is not a P-256 private key in PEM (an APNs .p8)")
        }
        for (flag, value) in [("--apns-key-id", keyID), ("--apns-team-id", teamID)] {
            guard (1...32).contains(value.utf8.count), value.utf8.allSatisfy({ $0 < 0x80 && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber) }) else {
                throw APNsProxyError(.configuration, "\(flag): expected the 10-character id Apple shows (letters and digits), got '\(value)'")
            }
        }
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The current token (`header.claims.signature`), made anew when the cached one is 50 minutes old.
    public func token(now: Date = Date()) throws -> String {
        let seconds = Int64(now.timeIntervalSince1970)
        if let cached = cached.withLock({ $0 }), seconds - cached.issuedAt < Self.lifetime, seconds >= cached.issuedAt {
            return cached.token
        }
        let header = Self.base64URL(Data(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = Self.base64URL(Data(#"{"iss":"\#(teamID)","iat":\#(seconds)}"#.utf8))
        let signingInput = "\(header).\(claims)"
        // ES256 in a JWT is the raw r‖s (64 bytes), not DER.
        let signature = try key.signature(for: Data(signingInput.utf8)).rawRepresentation
        let token = "\(signingInput).\(Self.base64URL(signature))"
        self.cached.withLock { $0 = (token, seconds) }
        return token
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
