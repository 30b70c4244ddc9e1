import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import NIOCore
import NIOSSL
import Synchronization

/// A stand-in for APNs, for the proxy's tests and benchmark: the provider API over HTTP/2 with TLS (ALPN h2) on
/// loopback, with the certificate given. It answers by the device token's first three characters, as APNs would
/// answer such a token (no token: 400 MissingDeviceToken): `400…` → 400 BadDeviceToken, `410…` → 410 Unregistered with the current time in
/// milliseconds, `429…` → 429 TooManyRequests, anything else → 200. Every answer carries `apns-id` (the request's,
/// else a new one) and `apns-unique-id`. With `--log FILE` it appends one JSON line per request it received
/// (path, headers, body, the status it answered) so a test can check what reached "APNs".
struct FakeAPNs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-apns", abstract: "A fake APNs (HTTP/2 over TLS) for the proxy's tests and benchmark.",
        shouldDisplay: false)

    @Option(help: "Port (0: any free one; the chosen port is printed).") var port = 0
    @Option(help: "PEM certificate.") var cert: String
    @Option(help: "PEM private key.") var key: String
    @Option(help: "Append one JSON line per request received to this file.") var log: String?

    func run() async throws {
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(cert).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        let journal = try log.map { path in
            FileManager.default.createFile(atPath: path, contents: nil)
            return Journal(handle: try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
        }
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            let path = request.uri.path
            // A broadcast (`/4/broadcasts/…`) has no token and is answered 200.
            let token = path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)) : "broadcast"
            let apnsID = request.headers[HTTPField.Name("apns-id")!] ?? UUID().uuidString
            let (status, answer) = Self.answer(token: token)
            var headers: HTTPFields = [HTTPField.Name("apns-id")!: apnsID, HTTPField.Name("apns-unique-id")!: UUID().uuidString.lowercased()]
            if answer != nil { headers[.contentType] = "application/json" }
            journal?.write(path: path, fields: request.headers, body: body, status: status, apnsID: apnsID)
            return Response(
                status: .init(code: status), headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: answer ?? "")))
        }
        let app = Application(
            responder: responder, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "fake-apns"),
            onServerRunning: { channel in
                let line = "fake APNs listening on https://127.0.0.1:\(channel.localAddress?.port ?? 0)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            })
        try await app.runService()
    }

    static func answer(token: String) -> (Int, String?) {
        if token.isEmpty { return (400, #"{"reason":"MissingDeviceToken"}"#) }
        return switch token.prefix(3) {
        case "400": (400, #"{"reason":"BadDeviceToken"}"#)
        case "410": (410, #"{"reason":"Unregistered","timestamp":\#(Int64(Date().timeIntervalSince1970 * 1000))}"#)
        case "429": (429, #"{"reason":"TooManyRequests"}"#)
        default: (200, nil)
        }
    }

    /// One JSON line per request, written whole under a lock.
    final class Journal: Sendable {
        private let handle: Mutex<FileHandle>

        init(handle: FileHandle) { self.handle = Mutex(handle) }

        func write(path: String, fields: HTTPFields, body: ByteBuffer, status: Int, apnsID: String) {
            var headers: [String: String] = [:]
            for field in fields { headers[field.name.canonicalName] = field.value }
            let object: [String: Any] = [
                "path": path, "headers": headers, "body": String(buffer: body), "status": status, "apnsId": apnsID,
            ]
            guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
            line.append(0x0A)
            handle.withLock { $0.write(line) }
        }
    }
}
