import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerTesting
import NIOCore
import Testing

/// What `serve`'s readers hold in memory: none of the file mapped unless asked (`--reader-map-mib`), since mapped
/// pages count in its resident size once per reader connection (StoreConfiguration.readerMapBytes).
@Suite("serve's readers map the file only when asked (real binary)")
struct ServeMemoryTests {
    /// The mappings of `file` in a process's address space (/proc/PID/maps lines ending with its path).
    static func mappings(of file: String, in pid: pid_t) throws -> Int {
        // Read to its end: Foundation's `String(contentsOfFile:)` reads a /proc file's first 4 KiB only.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return maps.split(separator: "\n").filter { $0.hasSuffix(" " + file) }.count
    }

    @Test("by default no reader maps the ledger file; --reader-map-mib 1 and LEDGER_READER_MAP_MIB=1 map it", arguments: [
        ([String](), [String: String](), false),
        (["--reader-map-mib", "1"], [:], true),
        ([], ["LEDGER_READER_MAP_MIB": "1"], true),
    ])
    func mapsOnlyWhenAsked(arguments: [String], environment: [String: String], mapped: Bool) async throws {
        let ledger = try await ServeProcess.keyedLedger(prefix: "serve-map", app: "com.example.map", scope: "read")
        let server = try await ServeProcess.start(
            ledger.binary, db: ledger.db, directory: ledger.directory, arguments: arguments, environment: environment)
        defer { server.stop() }
        let client = TestClient(host: "127.0.0.1", port: server.port, configuration: .init(timeout: .seconds(10)))
        client.connect()
        defer { Task { try? await client.shutdown() } }
        let headers: HTTPFields = [.authorization: "Bearer \(ledger.key)"]
        // Concurrent reads, so that the pool opens several reader connections.
        try await withThrowingTaskGroup(of: UInt.self) { group in
            for _ in 0..<16 {
                group.addTask { UInt(try await client.get("/v1/activities", headers: headers).status.code) }
            }
            for try await status in group { #expect(status == 200) }
        }
        let path = URL(fileURLWithPath: ledger.db).resolvingSymlinksInPath().path
        let count = try Self.mappings(of: path, in: server.process.processIdentifier)
        #expect(mapped ? count > 0 : count == 0, "\(count) mappings of \(path)")
    }
}
