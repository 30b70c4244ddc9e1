import Foundation
import GRDB
import LedgerStore
import Testing

@Suite("Rows a segment holds, before they are purged")
struct SealDeadRowTests {
    @Test("a sealed event whose row is not purged yet is read from its segment, by id too; a changed dead row changes nothing")
    func deadRowsAreNotRead() async throws {
        var configuration = StoreFixture.fastConfiguration
        configuration.segmentEvents = 100
        let fixture = try StoreFixture(configuration: configuration)
        let appended = (0..<150).map { index in event("activity:D\(index % 7)", at: Int64(index)) }
        _ = try await fixture.store.append(AppendBatch(events: appended))
        let before = try SealMigrationTests.all(fixture.store)
        // Stop right after the first segment's commit: its 100 rows stay, dead, as after a crash at that moment.
        var asked = 0
        let report = try fixture.store.seal(continuing: {
            asked += 1
            return asked <= 2
        })
        #expect(report.segments == 1 && report.sealedThrough == 100)
        let dead = try await fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events WHERE position <= 100") }
        #expect(dead == 100)
        // Change a dead row's payload: no read may show it, and verify (which reads the segment) still passes.
        let target = appended[41]
        try await fixture.store.pool.write { db in
            try db.execute(sql: "UPDATE events SET payload = zeroblob(8), dictionary = NULL WHERE position = 42")
        }
        let found = try await fixture.store.pool.read { db in try fixture.store.event(in: db, id: target.id) }
        #expect(found == before[41])
        #expect(try SealMigrationTests.all(fixture.store) == before)
        #expect(try fixture.store.verify().ok)
        // Sealing again purges the dead rows first and files their ids.
        let rest = try fixture.store.seal()
        #expect(rest.sealedThrough == 150)
        let left = try await fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events") }
        #expect(left == 0)
        #expect(try await fixture.store.pool.read { db in try fixture.store.event(in: db, id: target.id) } == before[41])
        #expect(try SealMigrationTests.all(fixture.store) == before)
    }
}
