import ActivityModel
import Foundation
import Testing

@testable import APNsProxy

@Suite("The recording journal")
struct RecordingJournalTests {
    static func exchange(_ n: Int) -> ProxiedExchange {
        ProxiedExchange(
            app: "com.example", at: Instant(milliseconds: 1_700_000_000_000 + Int64(n)), token: "ab\(n)",
            headers: [("apns-id", "ID-\(n)"), ("apns-topic", "com.example.push-type.liveactivity")],
            body: Array(#"{"aps":{"event":"update","timestamp":1,"content-state":{"n":"é\u0000"}}}"#.utf8) + [0xFF],
            status: 410, apnsID: "ID-\(n)", answerBody: Array(#"{"reason":"Unregistered","timestamp":5}"#.utf8))
    }

    static func directory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a line reads back as the same exchange, bodies byte for byte")
    func roundTrip() throws {
        let original = Self.exchange(1)
        let read = try ProxiedExchange(journalLine: original.journalLine())
        #expect(read.app == original.app && read.at == original.at && read.token == original.token)
        #expect(read.body == original.body && read.answerBody == original.answerBody)
        #expect(read.headers.map(\.name) == original.headers.map(\.name))
        #expect(read.headers.map(\.value) == original.headers.map(\.value))
        #expect(read.status == 410 && read.apnsID == "ID-1")
        #expect(read.key == original.key, "a replay must record the same event ids")
    }

    @Test("a line without a key (an older journal) reads back with the same derived key every time")
    func keylessLine() throws {
        var object = try JSONParser.parse(Self.exchange(2).journalLine())
        guard case .object(var members) = object else { throw APNsProxyError(.configuration, "not an object") }
        members["key"] = nil
        object = .object(members)
        let first = try ProxiedExchange(journalLine: object.compactBytes)
        let again = try ProxiedExchange(journalLine: object.compactBytes)
        #expect(first.key == again.key && first.key != Self.exchange(2).key)
    }

    @Test("what was not finished is recovered by the next journal; finished files are truncated or removed")
    func recovery() throws {
        let folder = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let base = folder + "/ledger.sqlite.apns-journal"
        do {
            let journal = try RecordingJournal(base: base, rotateBytes: 600)
            var generations: [Int] = []
            for n in 0..<6 { generations.append(try #require(journal.append(Self.exchange(n)))) }
            #expect(Set(generations).count > 1, "never rotated")
            for (n, generation) in generations.enumerated() where n != 4 { journal.finished(generation) }
            // The process is killed here: no close().
        }
        let next = try RecordingJournal(base: base)
        let recovered = next.recover()
        // A file is replayed whole while any of its lines is unfinished (a replayed recorded exchange is a no-op:
        // its event ids derive from apns-id); files all of whose lines finished are gone.
        #expect(recovered.contains { $0.apnsID == "ID-4" })
        #expect(!recovered.contains { $0.apnsID == "ID-0" })
        #expect(recovered.count < 6)
        #expect(throws: APNsProxyError.self) { try RecordingJournal(base: base) }
        next.forgetRecovered()
        for exchange in recovered { next.finished(try #require(next.append(exchange))) }
        next.close()
        let left = try FileManager.default.contentsOfDirectory(atPath: (base as NSString).deletingLastPathComponent)
            .filter { $0.hasSuffix(".jsonl") }
        #expect(left.isEmpty, "\(left)")
    }
}
