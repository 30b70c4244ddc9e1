import Foundation
import Testing

@testable import Ledger

@Suite("Ledger schema")
struct LedgerSchemaTests {
    @Test("every file in Schemas/sql/ledger is a migration, in order, and the migrations run its text")
    func migrationsMatchFiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("Schemas/sql/ledger")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files == LedgerSchema.migrations.map { $0.name + ".sql" })
        for migration in LedgerSchema.migrations {
            let text = try String(contentsOf: folder.appendingPathComponent(migration.name + ".sql"), encoding: .utf8)
            #expect(text == migration.sql, "\(migration.name)")
        }
    }
}
