import ActivityModel
import GRDB
import Ledger
import LedgerStore
import Logging
import LedgerTesting
import Testing

@Suite("Projections equal a rebuild and the pure fold")
struct ProjectionEquivalenceTests {
    static func dump(_ ledger: Ledger) throws -> [String] {
        try ledger.pool.read { db in
            var out: [String] = []
            for table in ["activities", "tokens", "channel_members", "start_tokens", "projection_positions"] {
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2")
                out += rows.map { "\(table) \($0)" }
            }
            return out
        }
    }

    @Test("inline projections equal a rebuild byte for byte after a random workload", arguments: [1, 2, 3] as [UInt64])
    func rebuildMatchesInline(seed: UInt64) async throws {
        let temp = try TemporaryLedger()
        let lines = RandomWorkload(seed: seed).lines()
        // Appends in uneven batches, as concurrent clients would.
        var index = 0
        while index < lines.count {
            let size = min(lines.count - index, Int(seed) * 7 + 3)
            try await temp.append(lines[index..<index + size].joined(separator: "\n"))
            index += size
        }
        let inline = try Self.dump(temp.ledger)
        #expect(inline.count > 40)
        let summary = try await temp.ledger.rebuild()
        #expect(summary.events == Int64(lines.count))
        let rebuilt = try Self.dump(temp.ledger)
        #expect(inline == rebuilt)
    }

    @Test("the projection's token and attributes type agree with the fold", arguments: [4, 5] as [UInt64])
    func projectionMatchesFold(seed: UInt64) async throws {
        let temp = try TemporaryLedger()
        try await temp.append(RandomWorkload(seed: seed).lines().joined(separator: "\n"))
        let rows = try temp.ledger.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT activity, attributes_type, token, last_at FROM activities WHERE requested_at IS NOT NULL")
        }
        #expect(!rows.isEmpty)
        for row in rows {
            let activity: String = row["activity"]
            let lastAt: Int64 = row["last_at"]
            let state = try temp.ledger.state(activity: activity, at: Instant(milliseconds: lastAt))
            #expect(state.attributesType == row["attributes_type"] as String)
            #expect(state.token == row["token"] as String?, "activity \(activity)")
        }
    }

    @Test("a ledger whose projections fell behind catches up when opened")
    func catchUpOnOpen() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(RandomWorkload(seed: 9).lines().joined(separator: "\n"))
        let before = try Self.dump(temp.ledger)
        try await temp.ledger.pool.write { db in
            try db.execute(sql: """
                DELETE FROM activities; DELETE FROM tokens; DELETE FROM channel_members; DELETE FROM start_tokens;
                DELETE FROM projection_positions
                """)
        }
        let reopened = try Ledger(path: temp.path, logger: .init(label: "test"))
        let after = try Self.dump(reopened)
        #expect(after == before, "\(Set(after).symmetricDifference(Set(before)).sorted().prefix(6))")
    }
}
