import ActivityModel
import Foundation
@testable import Ledger
import LedgerTesting
import Testing

/// The truth spool (an external sort) against a plain reading of SPEC §5's rule: one item per activity, the latest
/// `at` winning, ties the later line, no `at` the earliest; activities in the order of their UTF-8 bytes.
@Suite("Nightly: the sorted truth spool")
struct TruthSpoolTests {
    /// A feed with repeated activities (with and without `at`, equal `at`s), ids sharing long prefixes, ids that are
    /// prefixes of others, non-ASCII ids, and blank and invalid lines.
    static func feed(seed: UInt64, lines count: Int) -> [String] {
        var random = SeededRandom(seed: seed)
        let stems = ["A", "ride-0000000", "ride-00000001", "ride-000000010", "é", "ÉTÉ-", "z", "Zürich-"]
        var lines: [String] = []
        for _ in 0..<count {
            let roll = random.next() % 100
            if roll < 3 { lines.append(roll == 0 ? "   " : #"{"activity": 7}"#); continue }
            let id = stems[Int(random.next() % UInt64(stems.count))] + String(random.next() % 40)
            var fields = [#""activity":"\#(id)""#]
            switch random.next() % 4 {
            case 0: break
            case 1: fields.append(#""at":"2026-11-20T21:0\#(random.next() % 3):00Z""#)
            case 2: fields.append(#""at":\#(1_763_672_400 + Int(random.next() % 3) * 60)"#)
            default: fields.append(#""at":null"#)
            }
            if random.next() % 3 > 0 { fields.append(#""state":{"b":\#(random.next() % 5),"a":[1,"x"]}"#) }
            if random.next() % 4 == 0 { fields.append(#""done":true"#) }
            lines.append("{" + fields.joined(separator: ",") + "}")
        }
        return lines
    }

    /// The winners by a dictionary over the lines in order.
    static func oracle(_ lines: [String]) -> [(activity: String, line: Int, done: Bool, state: String?)] {
        var best: [String: (at: Int64, line: Int, done: Bool, state: String?)] = [:]
        for (index, text) in lines.enumerated() {
            guard let item = try? TruthItem(line: Array(text.utf8), number: index + 1) else { continue }
            let at = item.at?.milliseconds ?? .min
            if let current = best[item.activity], (current.at, current.line) > (at, item.line) { continue }
            let state = item.state.map { String(decoding: CanonicalJSON.bytes($0), as: UTF8.self) }
            best[item.activity] = (at, item.line, item.done, state)
        }
        return best.map { (activity: $0.key, line: $0.value.line, done: $0.value.done, state: $0.value.state) }
            .sorted { $0.activity.utf8.lexicographicallyPrecedes($1.activity.utf8) }
    }

    static func spool(_ lines: [String], runBytes: Int) async throws -> TruthSpool {
        let path = FileManager.default.temporaryDirectory.path + "/truth-spool-\(UUID().uuidString).jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let spool = TruthSpool(runBytes: runBytes)
        try await spool.load(try JSONLinesReader(path: path))
        return spool
    }

    @Test(
        "one run or many spilled runs, the merge yields the winning item of each activity in byte order",
        arguments: [
            (seed: 1, runBytes: 32 << 20), (seed: 2, runBytes: 300), (seed: 3, runBytes: 2_000), (seed: 4, runBytes: 1),
        ])
    func mergeFollowsTheRule(seed: UInt64, runBytes: Int) async throws {
        let lines = Self.feed(seed: seed, lines: 3_000)
        let spool = try await Self.spool(lines, runBytes: runBytes)
        let merge = try spool.merged()
        var rows: [TruthSpool.Row] = []
        while true {
            let page = try merge.next(limit: 97)
            if page.isEmpty { break }
            rows += page
        }
        let expected = Self.oracle(lines)
        #expect(rows.count == expected.count)
        for (row, want) in zip(rows, expected) {
            #expect(row.activity == want.activity)
            #expect(row.line == want.line, "\(want.activity)")
            #expect(row.done == want.done, "\(want.activity)")
            #expect(row.stateText == want.state, "\(want.activity)")
        }
        #expect(try spool.count() == expected.count)
        #expect(spool.invalidCount == lines.filter { $0.hasPrefix(#"{"activity": 7"#) }.count)
        #expect(spool.items + spool.invalidCount == lines.filter { !$0.allSatisfy(\.isWhitespace) }.count)
    }

    @Test("each pass starts from the first item, and an empty feed merges to nothing")
    func passes() async throws {
        let spool = try await Self.spool(Self.feed(seed: 5, lines: 500), runBytes: 400)
        let first = try spool.merged().next(limit: 10_000).map(\.activity)
        let second = try spool.merged().next(limit: 10_000).map(\.activity)
        #expect(!first.isEmpty && first == second)
        let empty = try await Self.spool([], runBytes: 400)
        #expect(try empty.merged().next().isEmpty)
        #expect(try empty.count() == 0)
    }
}
