import Foundation
import LedgerStore
import Logging

/// A store in a fresh temporary directory, removed when the fixture goes away.
final class StoreFixture: Sendable {
    let directory: URL
    let path: String
    let store: EventStore

    init(configuration: StoreConfiguration = StoreFixture.fastConfiguration) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledgerstore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("ledger.sqlite").path
        store = try EventStore(path: path, configuration: configuration, logger: Logger(label: "test"))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Durability off keeps the suite quick; the crash test uses the default (full).
    static var fastConfiguration: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.durability = .off
        return configuration
    }

    func reopen(_ configuration: StoreConfiguration = StoreFixture.fastConfiguration) throws -> EventStore {
        try EventStore(path: path, configuration: configuration, logger: Logger(label: "test"))
    }
}

func event(
    _ stream: String, _ type: String = "update", id: String = UUID().uuidString.lowercased(), at: Int64 = 1_000,
    payload: String = #"{"n":1}"#
) -> NewEvent {
    NewEvent(id: id, stream: stream, type: type, at: at, recordedAt: 2_000, payload: Array(payload.utf8))
}
