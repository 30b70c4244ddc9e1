import Crypto
import Foundation
import Testing

@testable import APNsProxy

@Suite("The APNs provider token (JWT ES256)")
struct APNsTokenSignerTests {
    static func keyFile() throws -> (String, P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey-\(UUID().uuidString).p8").path
        try key.pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, key)
    }

    static func decode(_ part: Substring) -> Data? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    @Test("the token names the key and team, carries the issue time, and verifies with the key's public half")
    func signs() throws {
        let (path, key) = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let signer = try APNsTokenSigner(p8: path, keyID: "ABC123DEFG", teamID: "TEAM123456")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let parts = try signer.token(now: now).split(separator: ".")
        #expect(parts.count == 3)
        #expect(String(decoding: try #require(Self.decode(parts[0])), as: UTF8.self) == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(String(decoding: try #require(Self.decode(parts[1])), as: UTF8.self) == #"{"iss":"TEAM123456","iat":1800000000}"#)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Self.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test("a token is reused for 50 minutes and made anew before APNs' 60-minute limit")
    func refreshes() throws {
        let (path, _) = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let signer = try APNsTokenSigner(p8: path, keyID: "ABC123DEFG", teamID: "TEAM123456")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try signer.token(now: start)
        #expect(try signer.token(now: start.addingTimeInterval(49 * 60)) == first)
        let second = try signer.token(now: start.addingTimeInterval(50 * 60))
        #expect(second != first)
        #expect(try signer.token(now: start.addingTimeInterval(59 * 60)) == second)
    }

    @Test("a file that is not a P-256 PEM key, or ids that are not Apple's, are refused naming the option")
    func refuses() throws {
        let (path, _) = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let junk = FileManager.default.temporaryDirectory.appendingPathComponent("junk-\(UUID().uuidString).p8").path
        try "not a key".write(toFile: junk, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: junk) }
        for (file, keyID, teamID, flag) in [
            (junk, "ABC", "TEAM", "--apns-key-file"), ("/nonexistent.p8", "ABC", "TEAM", "--apns-key-file"),
            (path, "AB\"C", "TEAM", "--apns-key-id"), (path, "ABC", "", "--apns-team-id"),
        ] {
            do {
                _ = try APNsTokenSigner(p8: file, keyID: keyID, teamID: teamID)
                Issue.record("accepted \(file) \(keyID) \(teamID)")
            } catch {
                #expect(error.message.hasPrefix(flag), "\(error.message)")
            }
        }
    }
}
