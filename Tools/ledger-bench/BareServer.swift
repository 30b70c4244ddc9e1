import ActivityModel
import ArgumentParser
import Foundation
import Hummingbird
import Ledger
import Logging
import NIOCore

/// What a user could pick instead of our stack: a bare Hummingbird 2 application in its own process, set up as
/// `activity-ledger serve` is (HTTP/1.1, loopback, release build), with one GET route answering a small JSON
/// document and one POST route that reads the whole body and answers a small JSON document. `ledger-bench http`
/// runs it beside the real server and drives both with the same requests over the same connections.
struct BareServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bare-server", abstract: "A bare Hummingbird server, the HTTP baseline (used by `http`).",
        shouldDisplay: false)

    @Option(help: "Port (0: any free one; the chosen port is printed).") var port = 0
    @Option(help: "Largest accepted body.") var maxBodyBytes = 16 * 1024 * 1024
    @Option(help: """
        A ledger file: `POST /v1/ledger-events` then appends the body (one interchange event) to it durably, with no
        OpenAPI layer and no middleware — the floor of the design change BENCHMARKS.md names for single appends.
        """)
    var ledger: String?

    func run() async throws {
        let router = Router()
        let limit = maxBodyBytes
        router.get("/health") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"status":"ok"}"#)))
        }
        router.post("/v1/events") { request, _ in
            let body = try await request.body.collect(upTo: limit)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"bytes":\#(body.readableBytes)}"#)))
        }
        if let path = ledger {
            // Durability full, the store's default and `serve`'s.
            let opened = try Ledger(
                path: path,
                logger: Logger(label: "bare", factory: { _ in SwiftLogNoOpLogHandler() }))
            router.post("/v1/ledger-events") { request, _ in
                let body = try await request.body.collect(upTo: limit)
                let event = try body.withUnsafeReadableBytes { try EventCodec.decode($0) }
                let outcome = try await opened.append(decoded: [event], app: "com.example.bench")[0]
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: outcome.json.compactBytes)))
            }
        }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "bare"),
            onServerRunning: { channel in
                // The same line `serve` prints, so one parser finds either's port.
                let line = "bare hummingbird listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        )
        try await app.runService()
    }
}
