import Foundation
import GRDB
import LedgerStore
import Logging
import Testing

/// Readers map the file (`StoreConfiguration.readerMapBytes`, SQLite's `mmap_size`); the writer never does.
@Suite("Reader connections map as much of the file as configured, the writer none")
struct ReaderMapTests {
    static func sizes(_ store: EventStore) async throws -> (reader: Int, writer: Int) {
        let reader = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") ?? -1 }
        let writer = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") ?? -1 }
        return (reader, writer)
    }

    @Test("the default maps 256 MiB per reader; 0 maps nothing; a read-only store maps too", arguments: [nil, 0, 1 << 20])
    func mapSizes(bytes: Int?) async throws {
        var configuration = StoreFixture.fastConfiguration
        if let bytes { configuration.readerMapBytes = bytes }
        let fixture = try StoreFixture(configuration: configuration)
        _ = try await fixture.store.append(AppendBatch(events: [event("activity:A1")]))
        let expected = bytes ?? 256 << 20
        let sizes = try await Self.sizes(fixture.store)
        #expect(sizes.reader == expected)
        #expect(sizes.writer == 0)
        fixture.store.close()
        var readOnly = configuration
        readOnly.readOnly = true
        let reader = try fixture.reopen(readOnly)
        #expect(try await reader.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") } == expected)
        // Mapped reads answer as copied ones do.
        #expect(try reader.stats().events == 1)
        reader.close()
    }
}
