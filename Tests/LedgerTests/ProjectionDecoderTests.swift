import ActivityModel
import Foundation
@testable import Ledger
import LedgerStore
import LedgerTesting
import Testing

/// The rebuild's fast decoder (`ProjectionDecoder`) must agree with the full decoder: whatever it accepts, the
/// full decoder accepts and projects the same way; whatever the full decoder refuses, it leaves to it.
@Suite("The projection decoder agrees with the full decoder")
struct ProjectionDecoderTests {
    static func recorded(type: String, stream: String, payload: [UInt8]) -> RecordedEvent {
        RecordedEvent(
            position: 7, stream: stream, version: 1, id: "event-1", type: type, at: 1_795_000_000_000,
            recordedAt: 1_795_000_000_000, payload: payload, hash: [])
    }

    static func recorded(_ event: LedgerEvent) -> RecordedEvent {
        recorded(type: event.type.rawValue, stream: event.stream.description, payload: EventCodec.encodePayload(event))
    }

    /// The full decoder's projection of a stored event, nil when it refuses it.
    static func full(_ event: RecordedEvent) -> ProjectionEvent? {
        (try? ActivityProjector.decode(event)).map(ProjectionEvent.init)
    }

    /// Checks the contract on one payload; true when the fast path decided it.
    @discardableResult
    static func check(_ event: RecordedEvent, _ comment: String = "") -> Bool {
        let full = full(event)
        guard let fast = ProjectionDecoder.fast(event) else { return false }
        #expect(full != nil, "fast path accepted what the full decoder refuses: \(comment)")
        #expect(fast.resolved == full?.resolved, "\(comment)")
        // Lent as a sealed block lends it (no array to keep): its content states are copies, equal once parsed.
        let lent = EventView.lending(event) { view in
            var view = view
            view.payloadOwner = nil
            return ProjectionDecoder.fast(view)
        }
        #expect(lent?.resolved == full?.resolved, "lent: \(comment)")
        return true
    }

    @Test("every event of random workloads and of the corpus takes the fast path and projects the same")
    func workloadsAgree() throws {
        var lines = Array(RandomWorkload(seed: 11).lines())
        lines += RandomWorkload(seed: 12, activities: 20, eventsPerActivity: 40).lines()
        lines += CorpusGenerator(seed: 3, activities: 40, eventsPerActivity: 60).lines()
        var types: Set<EventType> = []
        for line in lines {
            let event = try EventCodec.decode(line)
            types.insert(event.type)
            #expect(Self.check(Self.recorded(event), line), "fell back: \(line)")
        }
        #expect(types.count >= 8, "\(types)")
    }

    @Test("one stream memo across views of alternating streams and apps decodes each as its built event decodes")
    func streamMemoAgrees() throws {
        let lines = Array(RandomWorkload(seed: 13, activities: 6, eventsPerActivity: 12).lines())
        let apps = ["", "com.example.rides", "com.example.rides", "com.example.scores"]
        var streams = ProjectionDecoder.StreamMemo()
        for (index, line) in lines.enumerated() {
            let event = try EventCodec.decode(line)
            var recorded = Self.recorded(event)
            recorded.stream = Namespaced.qualify(recorded.stream, app: apps[index % apps.count])
            let built = try ProjectionDecoder.decode(recorded)
            let memo = EventView.lending(recorded) { try? ProjectionDecoder.decode($0, streams: &streams) }
            #expect(memo == built, "\(line)")
            #expect(memo?.stream.id.hasPrefix(apps[index % apps.count]) == true)
        }
    }

    @Test("odd but valid payloads of every type take the fast path and project the same", arguments: OddPayloads.valid)
    func oddValidPayloads(_ odd: OddPayload) {
        let event = Self.recorded(type: odd.type, stream: odd.stream, payload: Array(odd.payload.utf8))
        #expect(Self.full(event) != nil, "the full decoder refuses \(odd.payload)")
        #expect(Self.check(event, odd.payload), "fell back: \(odd.payload)")
    }

    @Test("payloads the fast path leaves to the full decoder are decided by it", arguments: OddPayloads.deferred)
    func deferredPayloads(_ odd: OddPayload) {
        let event = Self.recorded(type: odd.type, stream: odd.stream, payload: Array(odd.payload.utf8))
        #expect(ProjectionDecoder.fast(event) == nil, "\(odd.payload)")
        // Whatever the full decoder makes of it, `decode` gives the same.
        #expect((try? ProjectionDecoder.decode(event)).map(\.resolved) == Self.full(event)?.resolved)
    }

    @Test("the 4096-byte rule measures escaped and non-ASCII content as the full decoder does", arguments: [4094, 4095, 4096, 4097])
    func sizeBoundary(size: Int) {
        // {"s":"…"} is 8 bytes around the text; "\u00e9" is é (2 bytes), "\n" stays 2, "\/" becomes 1.
        for (escape, width) in [("\\u00e9", 2), ("\\n", 2), ("\\/", 1), ("é", 2), ("\\u0001", 6), ("\\ud83d\\ude00", 4)] {
            let count = (size - 8) / width
            let padding = String(repeating: "a", count: size - 8 - count * width)
            let text = String(repeating: escape, count: count) + padding
            let payload = #"{"data":{"content":{"state":{"s":"\#(text)"}},"timestamp":1795000000}}"#
            let event = Self.recorded(type: "update", stream: "activity:A1", payload: Array(payload.utf8))
            guard let fast = ProjectionDecoder.fast(event), case .update(let content, _) = fast.body else {
                Issue.record("fell back on \(escape)")
                continue
            }
            #expect(content.isTooLarge == (size > 4096), "\(escape) at \(size)")
            #expect(fast.resolved == Self.full(event)?.resolved, "\(escape) at \(size)")
        }
    }

    /// The scanner reads plain string runs eight bytes at a time (`PayloadScanner.plainWords`): a byte that needs
    /// a look (quote, backslash, control, DEL's neighbours, non-ASCII, a bad UTF-8 lead) at every offset of a word,
    /// and at the end, must give the full parser's verdict and size.
    @Test("a string's special byte at any offset of an eight-byte word is seen as the full parser sees it")
    func specialBytesAtEveryOffset() throws {
        let specials: [[UInt8]] = [
            Array(#"""#.utf8), Array(#"\"#.utf8), Array(#"é"#.utf8), [0x22], [0x5C], [0x01], [0x1F], [0x20],
            [0x7E], [0x7F], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0x80], [0xC3], [0xFF],
        ]
        for special in specials {
            for offset in 0..<19 {
                let text = Array(repeating: UInt8(ascii: "a"), count: offset) + special
                    + Array(repeating: UInt8(ascii: "b"), count: 18 - offset)
                let json = [UInt8(ascii: "\"")] + text + [UInt8(ascii: "\"")]
                let parsed = try? JSONParser.parse(json[...])
                let scanned = json.withUnsafeBufferPointer { bytes -> Int? in
                    var scanner = PayloadScanner(bytes)
                    guard let size = try? scanner.skipValue(depth: 1), scanner.atEnd else { return nil }
                    return size
                }
                #expect(scanned == parsed?.compactSize, "\(special) at \(offset)")
            }
        }
    }

    @Test("randomly damaged payloads are never accepted where the full decoder refuses them")
    func damagedPayloads() throws {
        var random = SeededRandom(seed: 99)
        var samples = try RandomWorkload(seed: 13, activities: 6, eventsPerActivity: 30).lines()
            .map { Self.recorded(try EventCodec.decode($0)) }
        samples += OddPayloads.valid.map { Self.recorded(type: $0.type, stream: $0.stream, payload: Array($0.payload.utf8)) }
        let alphabet = Array(#"{}[]":,\ 0123456789.eE+-ntrufal"u\é"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xED, 0xF4, 0xFF]
        var fast = 0
        var refused = 0
        for round in 0..<20_000 {
            var event = samples[round % samples.count]
            for _ in 0...Int.random(in: 0..<3, using: &random) {
                guard !event.payload.isEmpty else { break }
                let at = Int.random(in: 0..<event.payload.count, using: &random)
                let byte = alphabet.randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: event.payload[at] = byte
                case 1: event.payload.insert(byte, at: at)
                default: event.payload.remove(at: at)
                }
            }
            if Self.check(event, String(decoding: event.payload, as: UTF8.self)) { fast += 1 }
            if Self.full(event) == nil { refused += 1 }
        }
        // Both sides are exercised: many damaged payloads still take the fast path (and must project as the full
        // decoder does), many are refused by the full decoder (and the fast path must refuse them too).
        #expect(fast > 1_000)
        #expect(refused > 1_000)
    }

    @Test("a stored payload that does not decode is reported and skipped: rebuild and export go on past it", arguments: [
        #"{"data":{"by":"nobody"}}"#, #"{"data":{"by":"user"}"#, #"{"data":{"by":"us\u00"}}"#,
    ])
    func undecodablePayloadIsSkipped(payload: String) async throws {
        let temp = try TemporaryLedger()
        let workload = RandomWorkload(seed: 14, activities: 3, eventsPerActivity: 5)
        try await temp.append(workload.lines().joined(separator: "\n"))
        // Only the store itself can still write such bytes (every door of the ledger decodes what it stores):
        // this is what a file written by an older version may hold.
        let at: Int64 = 1_795_000_000_000
        let event = LedgerEvent(
            id: "bad-1", stream: .activity("A-bad"), at: Instant(milliseconds: at), data: .dismiss(DismissData(by: .user)))
        var stored = [
            NewEvent(id: "bad-1", stream: "activity:A-bad", type: "dismiss", at: at, payload: Array(payload.utf8))
        ]
        temp.ledger.projector.attach([event], app: "", to: &stored)
        let result = try await temp.ledger.store.append(AppendBatch(events: stored))
        let position = try #require(result.positions.first)
        let before = try await ProjectionEquivalenceTests.dump(temp.ledger).filter { !$0.contains("A-bad") }
        let summary = try await temp.ledger.rebuild()
        #expect(summary.undecodable == 1)
        #expect(try await ProjectionEquivalenceTests.dump(temp.ledger) == before)
        var skipped: [Int64] = []
        var exported = 0
        try await temp.ledger.exportLines(undecodable: { position, _ in skipped.append(position) }) { _, _ in
            exported += 1
            return true
        }
        #expect(skipped == [position])
        #expect(exported == workload.lines().count)
        // The feed and the activity's own queries leave the row out instead of failing.
        #expect(try await temp.ledger.feed(after: 0, limit: 1000).events.count == workload.lines().count)
        let timeline = await #expect(throws: LedgerError.self) { try await temp.ledger.timeline(activity: "A-bad") }
        #expect(timeline?.code == .notFound)
        // Without a handler, the export stops with the row's position.
        let error = await #expect(throws: LedgerError.self) { try await temp.ledger.exportLines { _, _ in true } }
        #expect(error?.message.hasPrefix("position \(position): stored payload does not decode: ") == true)
    }
}

extension ProjectionEvent {
    /// The event with every stored content state parsed, comparable with the full decoder's.
    var resolved: ProjectionEvent {
        mapContents { content in
            guard case .stored(let payload, let range) = content.state else { return content }
            var copy = content
            copy.state = .value((try? JSONParser.parse(payload[range])) ?? .null)
            return copy
        }
    }
}
