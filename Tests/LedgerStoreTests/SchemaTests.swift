import Foundation
import GRDB
import LedgerStore
import Testing

@Suite("Schema")
struct SchemaTests {
    private var schemaDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Schemas/sql")
    }

    @Test("the migrations in the store are exactly the SQL files in Schemas/sql, in order")
    func migrationsMatchFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: schemaDirectory.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.map { String($0.dropLast(4)) } == EventStore.migrations.map(\.name))
        for migration in EventStore.migrations {
            let text = try String(contentsOf: schemaDirectory.appendingPathComponent(migration.name + ".sql"), encoding: .utf8)
            #expect(text == migration.sql, "Schemas/sql/\(migration.name).sql differs from the compiled-in SQL")
        }
    }

    @Test("a migrated file has the documented tables and reopens without changes")
    func tables() async throws {
        let fixture = try StoreFixture()
        let tables = try await fixture.store.pool.read { (db) throws in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(tables.contains("events") && tables.contains("streams") && tables.contains("dictionaries"))
        _ = try fixture.reopen()
        var readOnly = StoreFixture.fastConfiguration
        readOnly.readOnly = true
        let reader = try fixture.reopen(readOnly)
        await #expect(throws: StoreError.self) { try await reader.append(AppendBatch(events: [event("a")])) }
    }
}
