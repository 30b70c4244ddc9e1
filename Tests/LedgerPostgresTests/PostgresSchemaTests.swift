import Foundation
import LedgerPostgres
import LedgerTesting
import PostgresNIO
import Testing

@Suite("PostgreSQL schema")
struct PostgresSchemaTests {
    private var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Schemas/sql/postgresql")
    }

    @Test("the embedded migrations are exactly the files in Schemas/sql/postgresql, in order")
    func migrationsMatchFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.map { String($0.dropLast(4)) } == PostgresSchema.migrations.map(\.name))
        for migration in PostgresSchema.migrations {
            let text = try String(contentsOf: folder.appendingPathComponent(migration.name + ".sql"), encoding: .utf8)
            #expect(text == migration.sql, "Schemas/sql/postgresql/\(migration.name).sql differs from the compiled-in SQL")
        }
    }

    @Test("servers starting together migrate once; a second open changes nothing", .enabled(if: Backend.all.contains(.postgres)))
    func concurrentMigrations() async throws {
        let database = try await TestDatabase.create()
        let logs = try await withThrowingTaskGroup(of: PostgresEventLog.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresEventLog(url: database.url, logger: quiet) } }
            var logs: [PostgresEventLog] = []
            for try await log in group { logs.append(log) }
            return logs
        }
        for log in logs { await log.close() }
        let applied = try await TestDatabase.admin(database.url) { client in
            var names: [String] = []
            for try await name in try await client.query("SELECT identifier FROM ledger_migrations").decode(String.self) {
                names.append(name)
            }
            return names
        }
        #expect(applied == PostgresSchema.migrations.map(\.name))
        try await database.drop()
    }
}
