import ActivityModel
import Formats
import Foundation
import Ledger
import LedgerStore
import Logging
import LedgerTesting
import Testing

@Suite("Import")
struct ImportTests {
    let valid = """
        {"id":"00000000-0000-4000-8000-000000000001","stream":"activity:R1","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"RideAttributes","attributes":{"ride":"R1"},"content":{"state":{"eta":5}},"pushType":"token"}}
        {"id":"00000000-0000-4000-8000-000000000002","stream":"activity:R1","type":"update","at":"2026-11-20T21:01:00Z","data":{"content":{"state":{"eta":4}},"timestamp":1795208460}}
        """

    @Test("a refused line stops the import, names its line and field, and writes nothing")
    func refusedLineWritesNothing() async throws {
        let temp = try TemporaryLedger()
        let bad = valid + "\n\n" + #"{"stream":"activity:R1","type":"update","at":"2026-11-20T21:02:00Z","data":{"content":{"state":{}}}}"#
        let path = try temp.write(bad, to: "bad.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        }
        #expect(error?.line == 4)
        #expect(error?.description.contains("timestamp") == true)
        #expect(try temp.ledger.store.lastPosition() == 0)
    }

    /// Random (version 4) ids put every id-less event on a random leaf of the unique id index, a whole page in
    /// each commit's WAL; version 7 ids grow at the index's end.
    @Test("events sent without an id get time-ordered (version 7) UUIDs of the time they arrived, on both doors")
    func idlessEventsGetTimeOrderedIDs() async throws {
        let temp = try TemporaryLedger()
        let before = Ledger.now().milliseconds
        let lines = (0..<3).map { index in
            #"{"stream":"activity:T\#(index)","type":"request","at":"2026-11-20T21:00:00Z","data":{"attributesType":"A","attributes":{},"content":{"state":{"n":\#(index)}},"pushType":"token"}}"#
        }
        _ = try await temp.ledger.importJSONLines(try JSONLinesReader(path: try temp.write(lines[0], to: "one.jsonl")))
        try await Task.sleep(for: .milliseconds(3))
        _ = try await temp.ledger.append([try EventCodec.decode(lines[1])])
        try await Task.sleep(for: .milliseconds(3))
        _ = try await temp.ledger.append([try EventCodec.decode(lines[2])])
        let after = Ledger.now().milliseconds
        var ids: [String] = []
        try await temp.ledger.exportLines { line, _ in
            ids.append(try EventCodec.decode(String(decoding: line, as: UTF8.self)).id ?? "")
            return true
        }
        #expect(ids.count == 3 && ids == ids.sorted(), "\(ids)")
        for id in ids {
            let bytes = try #require(CanonicalUUID.bytes(id), "\(id)")
            #expect(bytes[6] >> 4 == 7, "\(id)")
            let milliseconds = bytes.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
            #expect((before...after).contains(milliseconds), "\(id): \(milliseconds) not in \(before)…\(after)")
        }
    }

    @Test("an event over the size limit is refused with its line, and nothing is written")
    func oversizeLineRefused() async throws {
        let temp = try TemporaryLedger()
        let huge = #"{"stream":"activity:R1","type":"update","at":"2026-11-20T21:02:00Z","data":{"content":{"state":{"blob":""# + String(repeating: "x", count: 300_000) + #""}},"timestamp":1795208460}}"#
        let path = try temp.write(valid + "\n" + huge, to: "huge.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        }
        #expect(error?.line == 3)
        #expect(error?.message.contains("over the limit") == true)
        #expect(try temp.ledger.store.lastPosition() == 0)
    }

    /// An update line of exactly `bytes` bytes: `head`, then a content blob filling it up.
    static func line(bytes: Int, head: String) -> String {
        let tail = #""}},"timestamp":1}}"#
        let start = head + #""data":{"content":{"state":{"blob":""#
        return start + String(repeating: "x", count: bytes - start.utf8.count - tail.utf8.count) + tail
    }

    @Test("a line under the limit whose stored form (id, source, RFC 3339 time) is over it is refused on every way in")
    func storedFormOverLimitRefused() async throws {
        let temp = try TemporaryLedger()
        let limit = temp.ledger.maxEventBytes
        // Unix seconds and no id or source: the exported line is ~90 bytes longer than this one.
        let short = Self.line(bytes: limit - 10, head: #"{"stream":"activity:R9","type":"update","at":0,"#)
        #expect(short.utf8.count <= limit)
        let path = try temp.write(valid + "\n" + short, to: "near.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        }
        #expect(error?.line == 3)
        #expect(error?.message.contains("as the ledger stores and exports it") == true, "\(String(describing: error))")
        let appendError = await #expect(throws: LedgerError.self) {
            try await temp.ledger.append([try EventCodec.decode(short)])
        }
        #expect(appendError?.field == "events[0]")
        #expect(try temp.ledger.store.lastPosition() == 0)
    }

    @Test("an event at the limit in its stored form is kept, and its export imports again")
    func storedFormAtLimitRoundTrips() async throws {
        let temp = try TemporaryLedger()
        let limit = temp.ledger.maxEventBytes
        let head = #"{"id":"00000000-0000-4000-8000-000000000009","stream":"activity:R9","type":"update","at":"2026-11-20T21:02:00.000Z","source":"server","#
        let exact = Self.line(bytes: limit, head: head)
        _ = try await temp.ledger.append([try EventCodec.decode(exact)])
        var exported: [String] = []
        try await temp.ledger.exportLines { line, _ in
            exported.append(String(decoding: line, as: UTF8.self))
            return true
        }
        #expect(exported.map(\.utf8.count) == [limit])
        let copy = try TemporaryLedger()
        let summary = try await copy.ledger.importJSONLines(try JSONLinesReader(path: try copy.write(exported[0], to: "x.jsonl")))
        #expect(summary.appended == 1)
    }

    @Test("re-importing the same file appends nothing and keeps the positions")
    func reimportIsIdempotent() async throws {
        let temp = try TemporaryLedger()
        let path = try temp.write(valid, to: "ok.jsonl")
        let first = try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        #expect(first.appended == 2)
        let second = try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        #expect(second.appended == 0)
        #expect(second.duplicates == 2)
        #expect(second.lastPosition == 2)
    }

    @Test("an id re-sent with other content is refused with its line")
    func idConflictNamesLine() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(valid)
        let changed = valid.replacingOccurrences(of: "\"eta\":4", with: "\"eta\":3")
        let path = try temp.write(changed, to: "changed.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path))
        }
        #expect(error?.code == .conflict)
        #expect(error?.line == 2)
    }

    /// Batches have no savepoint: a refused batch is still in the transaction when its line is looked for, so a
    /// first occurrence written by the refused batch itself must not count as "stored before" (then the second,
    /// differing occurrence is the refused line), while one written by an earlier batch of the import does.
    @Test("an id sent twice in one import with other content is refused at the second line", arguments: [2, 2048])
    func repeatedIDInImportNamesSecondLine(batchSize: Int) async throws {
        let temp = try TemporaryLedger()
        let lines = valid.split(separator: "\n").map(String.init)
        let changed = lines[1].replacingOccurrences(of: "\"eta\":4", with: "\"eta\":3")
        let path = try temp.write([lines[0], lines[1], changed].joined(separator: "\n"), to: "twice.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), batchSize: batchSize)
        }
        #expect(error?.code == .conflict)
        #expect(error?.line == 3)
        #expect(try temp.ledger.store.lastPosition() == 0)
    }

    /// An import into a new file seals as it goes (`ImportSealer`): the first copy of a re-sent id may be held for
    /// the next segment, or in a segment the import already wrote; either way the changed copy's line is named.
    @Test("an id re-sent with other content after its first copy was sealed by the same import is refused at its line",
          arguments: [3, 1_190])
    func repeatedIDAfterItsSegmentNamesLine(firstCopy: Int) async throws {
        // Small segments and an early first dictionary (segments wait for it): the import seals from line ~330.
        let temp = try TemporaryLedger {
            $0.segmentEvents = 64
            $0.firstDictionaryAfter = 200
            $0.dictionarySize = 4096
        }
        var lines = RandomWorkload(seed: 9, activities: 40, eventsPerActivity: 30).lines()
        #expect(lines.count > 1_000 && firstCopy < lines.count - 64)
        var original = try EventCodec.decode(lines[firstCopy])
        if original.id == nil {
            original.id = "named-\(firstCopy)"
            lines[firstCopy] = String(decoding: EventCodec.encode(original), as: UTF8.self)
        }
        var changed = original
        changed.at = original.at.adding(milliseconds: 1)
        lines.append(String(decoding: EventCodec.encode(changed), as: UTF8.self))
        let path = try temp.write(lines.joined(separator: "\n"), to: "resent.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), batchSize: 100)
        }
        #expect(error?.code == .conflict)
        #expect(error?.line == lines.count, "\(error?.description ?? "")")
        #expect(try temp.ledger.store.lastPosition() == 0)
        // Without the changed copy the file imports, sealed but for its last partial segment.
        lines.removeLast()
        let good = try temp.write(lines.joined(separator: "\n"), to: "good.jsonl")
        let summary = try await temp.ledger.importJSONLines(try JSONLinesReader(path: good), batchSize: 100)
        #expect(summary.appended == lines.count && summary.lastPosition == Int64(lines.count))
        let stats = try temp.ledger.store.stats()
        #expect(stats.sealedEvents == Int64(lines.count / 64 * 64) && stats.unsealedEvents == Int64(lines.count % 64))
    }

    /// Ids are filed qualified by their app: a sealing import's ids are found again in their own namespace only.
    @Test("ids sealed by an import under an app are found again under it, and only under it")
    func sealedIDsKeepTheirApp() async throws {
        let temp = try TemporaryLedger { $0.segmentEvents = 64 }
        let lines = RandomWorkload(seed: 12, activities: 10, eventsPerActivity: 30).lines()
        let path = try temp.write(lines.joined(separator: "\n"), to: "app.jsonl")
        let first = try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), app: "com.example.rides")
        let stats = try temp.ledger.store.stats()
        #expect(first.appended == lines.count && stats.sealedEvents == Int64(lines.count / 64 * 64))
        #expect(stats.unsealedEvents == Int64(lines.count % 64))
        // Events sent without an id get a new one each time; the others are found again, sealed.
        let named = try lines.filter { try EventCodec.decode($0).id != nil }.count
        #expect(named > 100)
        let again = try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), app: "com.example.rides")
        #expect(again.duplicates == named && again.appended == lines.count - named)
        let other = try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), app: "com.example.scores")
        #expect(other.appended == lines.count)
        #expect(try temp.ledger.store.verify().ok)
    }

    @Test("export re-imports into an equal log")
    func exportRoundTrip() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(RandomWorkload(seed: 11, activities: 5, eventsPerActivity: 10).lines().joined(separator: "\n"))
        var lines: [String] = []
        try await temp.ledger.exportLines { bytes, _ in
            lines.append(String(decoding: bytes, as: UTF8.self))
            return true
        }
        let copy = try TemporaryLedger()
        let path = try copy.write(lines.joined(separator: "\n"), to: "export.jsonl")
        _ = try await copy.ledger.importJSONLines(try JSONLinesReader(path: path))
        var again: [String] = []
        try await copy.ledger.exportLines { bytes, _ in
            again.append(String(decoding: bytes, as: UTF8.self))
            return true
        }
        #expect(again == lines)
    }

    /// Many small batches force the decoding thread to run ahead of the writer: the refusal must still come
    /// after the batches before it are appended, and roll them all back.
    @Test("a refused line far into a multi-batch import names its line and rolls back every batch")
    func refusalAfterManyBatchesWritesNothing() async throws {
        let temp = try TemporaryLedger()
        var lines = RandomWorkload(seed: 5, activities: 20, eventsPerActivity: 30).lines()
        let refused = lines.count - 7
        lines.insert(#"{"stream":"activity:R1","type":"update","at":"2026-11-20T21:02:00Z","data":{"content":{}}}"#, at: refused)
        let path = try temp.write(lines.joined(separator: "\n"), to: "many.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), batchSize: 16)
        }
        #expect(error?.line == refused + 1)
        #expect(error?.field?.hasPrefix("data.content") == true)
        #expect(try temp.ledger.store.lastPosition() == 0)
        // The ledger is still usable: the same file without the bad line imports whole.
        lines.remove(at: refused)
        let good = try temp.write(lines.joined(separator: "\n"), to: "good.jsonl")
        let summary = try await temp.ledger.importJSONLines(try JSONLinesReader(path: good), batchSize: 16)
        #expect(summary.appended == lines.count)
    }

    @Test("a store refusal in an early batch wins over a decoding refusal in a later one")
    func earlierStoreRefusalWins() async throws {
        let temp = try TemporaryLedger()
        try await temp.append(valid)
        let changed = valid.replacingOccurrences(of: "\"eta\":4", with: "\"eta\":3")
        var lines = changed.split(separator: "\n").map(String.init)
        lines += RandomWorkload(seed: 6, activities: 4, eventsPerActivity: 10).lines()
        lines.append("{not json")
        let path = try temp.write(lines.joined(separator: "\n"), to: "both.jsonl")
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), batchSize: 4)
        }
        #expect(error?.code == .conflict)
        #expect(error?.line == 2)
        #expect(try temp.ledger.store.lastPosition() == 2)
    }

    @Test("progress is reported per batch, in order, ending at the last line")
    func progressIsOrdered() async throws {
        let temp = try TemporaryLedger()
        let lines = RandomWorkload(seed: 7, activities: 10, eventsPerActivity: 20).lines()
        let path = try temp.write(lines.joined(separator: "\n"), to: "progress.jsonl")
        final class Steps { var lines: [Int] = [] }
        let seen = Steps()
        let summary = try await temp.ledger.importJSONLines(try JSONLinesReader(path: path), batchSize: 50) { step in
            seen.lines.append(step.lines)
        }
        let steps = seen.lines
        #expect(steps.count >= lines.count / 50)
        #expect(steps == steps.sorted())
        #expect(steps.last == lines.count)
        #expect(summary.appended == lines.count)
        #expect(summary.lines == lines.count)
    }

    @Test("a store refusal returns while the input is still open (import - from a terminal or an idle pipe)",
        .timeLimit(.minutes(1)))
    func refusalDoesNotWaitForEndOfInput() async throws {
        let temp = try TemporaryLedger()
        _ = try await temp.ledger.importJSONLines(try JSONLinesReader(path: try temp.write(valid, to: "valid.jsonl")))
        let fifo = temp.directory.file("open.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // O_RDWR keeps a writer open without blocking, so the reader never sees the end of the input.
        let writer = open(fifo, O_RDWR)
        #expect(writer >= 0)
        defer { close(writer) }  // lets the abandoned decoding thread read its end of input and stop
        // A new event, then the first event's id with other content: the writer refuses line 2 while the
        // decoding thread already waits for line 3.
        let lines = [
            #"{"id":"00000000-0000-4000-8000-000000000003","stream":"activity:R1","type":"update","at":"2026-11-20T21:03:00Z","data":{"content":{"state":{"eta":3}},"timestamp":1795208580}}"#,
            #"{"id":"00000000-0000-4000-8000-000000000001","stream":"activity:R1","type":"update","at":"2026-11-20T21:04:00Z","data":{"content":{"state":{"eta":2}},"timestamp":1795208640}}"#,
        ]
        let text = lines.joined(separator: "\n") + "\n"
        _ = text.utf8CString.withUnsafeBufferPointer { write(writer, $0.baseAddress, $0.count - 1) }
        let error = await #expect(throws: LedgerError.self) {
            try await temp.ledger.importJSONLines(try JSONLinesReader(path: fifo), batchSize: 1)
        }
        #expect(error?.code == .conflict)
        #expect(error?.line == 2)
        #expect(try temp.ledger.store.lastPosition() == 2)
    }
}
