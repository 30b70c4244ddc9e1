import Foundation
import GRDB
import LedgerStore
import Logging
import Testing

/// Readers map the file (`StoreConfiguration.readerMapBytes`, SQLite's `mmap_size`); the writer never does.
@Suite("Reader connections map as much of the file as configured, the writer none")
struct ReaderMapTests {
    static func sizes(_ store: EventStore, _ pragma: String = "mmap_size") async throws -> (reader: Int, writer: Int) {
        let reader = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA \(pragma)") ?? -1 }
        let writer = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA \(pragma)") ?? -1 }
        return (reader, writer)
    }

    @Test("readers cache 4 MiB each, at most six of them, the writer 32 MiB; both are configurable")
    func cacheSizes() async throws {
        var configuration = StoreFixture.fastConfiguration
        let fixture = try StoreFixture(configuration: configuration)
        #expect(fixture.store.pool.configuration.maximumReaderCount == 6)
        // A negative cache_size is KiB.
        let sizes = try await Self.sizes(fixture.store, "cache_size")
        #expect(sizes.reader == -4096 && sizes.writer == -32768, "\(sizes)")
        fixture.store.close()
        configuration.readerCacheKiB = 1000
        configuration.cacheKiB = 3000
        let other = try fixture.reopen(configuration)
        let configured = try await Self.sizes(other, "cache_size")
        #expect(configured.reader == -1000 && configured.writer == -3000, "\(configured)")
        other.close()
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
