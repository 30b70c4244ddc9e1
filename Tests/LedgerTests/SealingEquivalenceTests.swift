import ActivityModel
import Foundation
import GRDB
import Ledger
import LedgerStore
import LedgerTesting
import Logging
import Testing

/// SPEC §6 "whatever the form": every query answers the same bytes whether the events are rows, partly sealed or
/// all sealed. One generated ledger (two apps and the app-less namespace, channels, pushes, ends, dismissals,
/// token rotations) is copied; one copy is sealed up to the middle of a segment, a copy of that is sealed
/// through its end; then every answer of the three files is compared byte for byte.
@Suite("Sealing changes no answer")
struct SealingEquivalenceTests {
    static let apps: [String?] = [nil, "com.example.rides", "com.example.scores"]
    static let segmentEvents = 500

    static func open(_ path: String) throws -> Ledger {
        var configuration = LedgerConfiguration()
        configuration.store.durability = .off
        configuration.store.segmentEvents = segmentEvents
        return try Ledger(path: path, configuration: configuration, logger: Logger(label: "test"))
    }

    /// The generated log: four sources appended in interleaved batches, so every segment mixes namespaces.
    /// With `namingEvents`, events the generators leave without an id get one derived from where they are, so
    /// two ledgers built alike hold the same ids (`PostgresEquivalenceTests`).
    static func build(_ ledger: Ledger, namingEvents: Bool = false) async throws -> Int {
        let sources: [(app: String?, lines: [String])] = [
            (nil, CorpusGenerator(seed: 16, activities: 120, eventsPerActivity: 18).lines().map { $0 }),
            (nil, RandomWorkload(seed: 23, activities: 30, eventsPerActivity: 25).lines()),
            (apps[1], RandomWorkload(seed: 21, activities: 40, eventsPerActivity: 30).lines()),
            (apps[2], RandomWorkload(seed: 22, activities: 40, eventsPerActivity: 30).lines()),
        ]
        var offsets = Array(repeating: 0, count: sources.count)
        var appended = 0
        var round = 0
        while offsets.indices.contains(where: { offsets[$0] < sources[$0].lines.count }) {
            for index in sources.indices where offsets[index] < sources[index].lines.count {
                let size = min(sources[index].lines.count - offsets[index], 23 + (round * 7 + index * 11) % 41)
                let events = try sources[index].lines[offsets[index]..<offsets[index] + size].enumerated().map {
                    var event = try EventCodec.decode($0.element)
                    if namingEvents, event.id == nil { event.id = "generated-\(index)-\(offsets[index] + $0.offset)" }
                    return event
                }
                let outcomes = try await ledger.append(events, app: sources[index].app)
                appended += outcomes.filter { !$0.duplicate }.count
                offsets[index] += size
            }
            round += 1
        }
        return appended
    }

    @Test("state, timeline, audits, lists, feed, event, verify, digest, export, replay, rebuild, resync and nightly answer the same bytes before, during and after sealing")
    func everyAnswerIsUnchanged() async throws {
        let directory = TemporaryDirectory(prefix: "sealing-equivalence")
        let rows = try Self.open(directory.file("rows.sqlite"))
        let total = try await Self.build(rows)
        #expect(total > 5_000)

        // Partly sealed: up to the middle of a segment, so the last segment is a short one and rows follow.
        let sealedMid = Int64(total / 2 + 137)
        _ = try rows.store.backup(into: directory.file("partial.sqlite"))
        let partial = try Self.open(directory.file("partial.sqlite"))
        let partialReport = try partial.store.seal(through: sealedMid)
        #expect(partialReport.sealedThrough == sealedMid)
        #expect(partialReport.segments == Int((sealedMid + 499) / 500))
        // All sealed: the rest of the partial file, starting after its short segment.
        _ = try partial.store.backup(into: directory.file("sealed.sqlite"))
        let sealed = try Self.open(directory.file("sealed.sqlite"))
        let fullReport = try await sealed.seal()
        #expect(fullReport.sealedThrough == Int64(total))
        #expect(fullReport.events == Int64(total) - sealedMid)

        let rowStats = try rows.store.stats()
        let partialStats = try partial.store.stats()
        let sealedStats = try sealed.store.stats()
        #expect(rowStats.sealedEvents == 0 && rowStats.unsealedEvents == Int64(total))
        #expect(partialStats.sealedEvents == sealedMid && partialStats.unsealedEvents == Int64(total) - sealedMid)
        #expect(sealedStats.sealedEvents == Int64(total) && sealedStats.unsealedEvents == 0)
        #expect(sealedStats.segments > 10)
        let rowCount = try await sealed.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events") }
        #expect(rowCount == 0)

        let plan = try await Probe.plan(rows, boundary: sealedMid)
        #expect(plan.activities.count > 200, "the corpus has too few activities to test much")
        #expect(plan.updateIDs.count > 100 && plan.eventIDs.count > 500)

        // The three files are asked at once (they share nothing), which halves the test's time on two cores.
        let answers = try await withThrowingTaskGroup(of: (String, Answers).self) { group in
            for (name, ledger) in [("rows", rows), ("partial", partial), ("sealed", sealed)] {
                group.addTask { (name, try await Probe(plan: plan, directory: directory, name: name).run(ledger)) }
            }
            var answers: [String: Answers] = [:]
            for try await (name, answer) in group { answers[name] = answer }
            return answers
        }
        let reference = try #require(answers["rows"])
        reference.expectSubstantial()
        for name in ["partial", "sealed"] {
            let other = try #require(answers[name])
            let sameQuestions = other.labels == reference.labels
            #expect(sameQuestions, "\(name): other questions were asked")
            var differing: [String] = []
            for (label, bytes) in reference.entries where other.bytes[label] != bytes { differing.append(label) }
            #expect(differing.isEmpty, "\(name) answers differently from the rows: \(differing.prefix(12))")
            if let first = differing.first {
                let mine = String(decoding: other.bytes[first] ?? [], as: UTF8.self)
                let theirs = String(decoding: reference.bytes[first] ?? [], as: UTF8.self)
                Issue.record("\(name) \(first):\n\(mine.prefix(600))\nrows:\n\(theirs.prefix(600))")
            }
        }
    }
}

/// Answers as labelled bytes, in the order they were asked.
struct Answers {
    private(set) var entries: [(String, [UInt8])] = []
    private(set) var bytes: [String: [UInt8]] = [:]
    var labels: [String] { entries.map(\.0) }

    mutating func add(_ label: String, _ value: [UInt8]) {
        precondition(bytes[label] == nil, "asked twice: \(label)")
        entries.append((label, value))
        bytes[label] = value
    }

    mutating func add(_ label: String, _ value: JSONValue) { add(label, value.compactBytes) }

    /// The answer or the error it threw (errors must be the same too).
    mutating func add(_ label: String, _ body: () async throws -> JSONValue) async {
        do {
            add(label, try await body())
        } catch {
            add(label, Array("error: \(error)".utf8))
        }
    }

    func count(prefix: String, where predicate: (String) -> Bool = { _ in true }) -> Int {
        entries.filter { $0.0.hasPrefix(prefix) && predicate(String(decoding: $0.1, as: UTF8.self)) }.count
    }

    /// The questions found real answers: a comparison of empty answers would prove nothing.
    func expectSubstantial() {
        #expect(count(prefix: "state ", where: { !$0.hasPrefix("error") }) > 500)
        #expect(count(prefix: "state ", where: { $0.hasPrefix("error") }) > 0)
        #expect(count(prefix: "timeline ", where: { $0.contains("\"hash\":\"") }) > 200)
        #expect(count(prefix: "audit activity ", where: { $0.contains("\"verdict\"") }) > 100)
        #expect(count(prefix: "audit update ", where: { $0.contains("\"verdict\"") }) > 50)
        #expect(count(prefix: "state ", where: { $0.contains("\"channels\":[\"") }) > 10)
        #expect(count(prefix: "state ", where: { $0.contains("\"phase\":\"dismissed\"") }) > 10)
        #expect(count(prefix: "state ", where: { $0.contains("\"phase\":\"ended\"") }) > 10)
        #expect(count(prefix: "nightly ", where: { $0.contains("\"recordedEvents\":") && !$0.contains("\"recordedEvents\":0") }) > 0)
        #expect(count(prefix: "resync", where: { $0.contains("\"action\"") }) > 0)
        #expect(count(prefix: "verify", where: { $0.contains("\"ok\":true") }) >= 3)
    }
}

/// What to ask every file: taken from the rows file's own answers, so all three are asked the same.
struct Probe {
    struct Plan {
        /// (app, activity id, times to ask the state at).
        var activities: [(app: String?, id: String, times: [Instant])]
        var updateIDs: [(app: String?, id: String)]
        var eventIDs: [(app: String?, id: String)]
        var lastPosition: Int64
        var boundary: Int64
        /// A digest at a position inside a segment and one at the partial seal's end.
        var digests: [Digest]
        var listTime: Instant
    }

    let plan: Plan
    let directory: TemporaryDirectory
    let name: String

    static func plan(_ ledger: Ledger, boundary: Int64) async throws -> Plan {
        var activities: [(app: String?, id: String, times: [Instant])] = []
        var updateIDs: [(app: String?, id: String)] = []
        var eventIDs: [(app: String?, id: String)] = []
        var latest = Instant(milliseconds: 0)
        var seen: Set<String> = []
        for app in SealingEquivalenceTests.apps {
            var cursor: String?
            repeat {
                let page = try await ledger.activities(ActivityFilter(app: app, limit: 200, after: cursor))
                for state in page.activities {
                    let timeline = try await ledger.timeline(activity: state.activity, app: app)
                    let times = timeline.entries.map(\.event.event.at)
                    guard let first = times.first, let last = times.last else { continue }
                    latest = max(latest, last)
                    let middle = times[times.count / 2]
                    activities.append((app, state.activity, [
                        first, middle.adding(milliseconds: -1), last, last.adding(milliseconds: 5 * 3_600_000),
                        first.adding(milliseconds: -1),
                    ]))
                    for entry in timeline.entries where [.update, .end].contains(entry.event.event.type) {
                        // A channel's update is in the timeline of every subscriber: ask once.
                        // (Every sixth: audits of all ~2500 would take most of the test's time.)
                        if let id = entry.event.event.id, seen.insert("\(app ?? "-") \(id)").inserted, seen.count % 6 == 0 {
                            updateIDs.append((app, id))
                        }
                    }
                }
                cursor = page.nextCursor
            } while cursor != nil
            var after: Int64 = 0
            while true {
                let slice = try await ledger.feed(after: after, limit: 1_000, app: app)
                for (index, event) in slice.events.enumerated() where index % 8 == 0 {
                    if let id = event.event.id { eventIDs.append((app, id)) }
                }
                guard slice.lastPosition > after else { break }
                after = slice.lastPosition
            }
        }
        let last = try await ledger.lastPosition()
        let digests = try await ledger.pool.read { db in
            try [boundary - 250, boundary, last - 1].map { position in
                let event = try #require(try ledger.store.events(in: db, positions: [position]).first)
                return Digest(position: position, hash: event.hash)
            }
        }
        return Plan(
            activities: activities, updateIDs: updateIDs, eventIDs: eventIDs, lastPosition: last, boundary: boundary,
            digests: digests, listTime: latest.adding(milliseconds: -3_600_000))
    }

    func run(_ ledger: Ledger) async throws -> Answers {
        var answers = Answers()
        try await chain(ledger, into: &answers)
        try await log(ledger, into: &answers, label: "")
        try await activityQueries(ledger, into: &answers)
        try await lists(ledger, into: &answers, label: "")
        try await replays(ledger, into: &answers)
        try await rebuild(ledger, into: &answers)
        try await writes(ledger, into: &answers)
        return answers
    }

    /// verify, verify up to earlier digests, digest.
    private func chain(_ ledger: Ledger, into answers: inout Answers) async throws {
        answers.add("verify", try await ledger.verify().json)
        for digest in plan.digests {
            answers.add("verify upTo \(digest.position)", try await ledger.verify(upTo: digest).json)
        }
        answers.add("digest", try await ledger.digest().json)
        answers.add("lastPosition", .int(try await ledger.lastPosition()))
    }

    /// Export of every namespace (with where each event is and its hash), the feed in pages that straddle
    /// segment ends and the sealed/unsealed boundary, and events by id.
    private func log(_ ledger: Ledger, into answers: inout Answers, label: String) async throws {
        for app in SealingEquivalenceTests.apps {
            var exported: [UInt8] = []
            try await ledger.exportLines(app: app) { line, recorded in
                exported += Array("\(recorded.position) \(recorded.version) \(recorded.recordedAt) ".utf8) + line
                exported += Array(" \(recorded.hash.map { String($0, radix: 16) }.joined())\n".utf8)
                return true
            }
            answers.add("\(label)export \(app ?? "-")", exported)
            var after: Int64 = 0
            var page = 0
            while after < plan.lastPosition {
                let slice = try await ledger.feed(after: after, limit: 97, app: app)
                answers.add("\(label)feed \(app ?? "-") page \(page)", slice.json)
                guard slice.lastPosition > after else { break }
                after = slice.lastPosition
                page += 1
            }
            for start in [plan.boundary - 40, plan.boundary - 1, plan.boundary, 499, 500, 1_000 - 3] as [Int64] {
                answers.add(
                    "\(label)feed \(app ?? "-") after \(start)",
                    try await ledger.feed(after: start, limit: 50, app: app).json)
            }
        }
        if label.isEmpty {
            for (app, id) in plan.eventIDs {
                await answers.add("event \(app ?? "-") \(id)") { try await ledger.event(id: id, app: app).json }
            }
            await answers.add("event missing") { try await ledger.event(id: "no-such-event").json }
        }
    }

    /// state at several times and now, timeline, audits.
    private func activityQueries(_ ledger: Ledger, into answers: inout Answers) async throws {
        for (app, id, times) in plan.activities {
            let key = "\(app ?? "-") \(id)"
            for (index, time) in times.enumerated() {
                await answers.add("state \(key) at \(index): \(time.milliseconds)") {
                    try await ledger.state(activity: id, at: time, app: app).json
                }
            }
            // Now: every event is in the past, so only `asOf` may differ between two asks.
            await answers.add("state \(key) now") { Self.withoutAsOf(try await ledger.state(activity: id, app: app).json) }
            await answers.add("timeline \(key)") { try await ledger.timeline(activity: id, app: app).json }
            await answers.add("timeline \(key) window") {
                try await ledger.timeline(activity: id, from: times[1], to: times[2], app: app).json
            }
            await answers.add("audit activity \(key)") {
                try await ledger.audit(activity: id, at: times[3], app: app).json
            }
        }
        for (app, id) in plan.updateIDs {
            await answers.add("audit update \(app ?? "-") \(id)") { try await ledger.audit(update: id, app: app).json }
        }
    }

    /// Every page of `activities` per namespace, and filtered lists.
    private func lists(_ ledger: Ledger, into answers: inout Answers, label: String) async throws {
        for app in SealingEquivalenceTests.apps {
            for (filterName, phase) in [("all", nil), ("active", Phase.active), ("ended", .ended), ("dismissed", .dismissed)]
                as [(String, Phase?)]
            {
                var cursor: String?
                var page = 0
                repeat {
                    let result = try await ledger.activities(
                        ActivityFilter(phase: phase, app: app, at: plan.listTime, limit: 17, after: cursor))
                    answers.add("\(label)activities \(app ?? "-") \(filterName) page \(page)", result.json)
                    cursor = result.nextCursor
                    page += 1
                } while cursor != nil
            }
            let now = try await ledger.activities(ActivityFilter(app: app, limit: 1000))
            answers.add("\(label)activities \(app ?? "-") now", Self.withoutAsOf(now.json))
        }
    }

    /// Replays into new files: the whole log (the same chain, since replay keeps `recorded_at`) and a prefix.
    private func replays(_ ledger: Ledger, into answers: inout Answers) async throws {
        for (tag, limit) in [("all", ReplayLimit.position(plan.lastPosition)), ("prefix", .position(plan.boundary + 7))] {
            let path = directory.file("replay-\(name)-\(tag).sqlite")
            let summary = try await ledger.replay(limit, into: path)
            answers.add("replay \(tag) summary", .object(["events": .int(summary.events), "last": .int(summary.lastPosition)]))
            let copy = try Ledger(path: path, logger: Logger(label: "test"))
            answers.add("replay \(tag) digest", try await copy.digest().json)
            answers.add("replay \(tag) verify", try await copy.verify().json)
            for app in SealingEquivalenceTests.apps {
                var exported: [UInt8] = []
                try await copy.exportLines(app: app) { line, recorded in
                    exported += Array("\(recorded.position) ".utf8) + line + [0x0A]
                    return true
                }
                answers.add("replay \(tag) export \(app ?? "-")", exported)
            }
        }
    }

    /// The projections, then rebuilt from the log (which reads it through the segments) and asked again.
    private func rebuild(_ ledger: Ledger, into answers: inout Answers) async throws {
        answers.add("projections", Array(try await ProjectionEquivalenceTests.dump(ledger).joined(separator: "\n").utf8))
        let summary = try await ledger.rebuild()
        answers.add("rebuild summary", .object(["events": .int(summary.events), "activities": .int(summary.activities)]))
        answers.add("rebuilt projections", Array(try await ProjectionEquivalenceTests.dump(ledger).joined(separator: "\n").utf8))
        try await lists(ledger, into: &answers, label: "rebuilt ")
        for (app, id, times) in plan.activities.prefix(40) {
            await answers.add("rebuilt state \(app ?? "-") \(id)") {
                try await ledger.state(activity: id, at: times[2], app: app).json
            }
        }
    }

    /// Queries that append (resync, nightly), then the log again: appends after sealing land where they did on
    /// the rows file.
    private func writes(_ ledger: Ledger, into answers: inout Answers) async throws {
        let rides = plan.activities.filter { $0.app == SealingEquivalenceTests.apps[1] }
        let installation = "I1"
        let mine = rides.filter { $0.id.hasSuffix("-1") || $0.id.hasSuffix("-6") || $0.id.hasSuffix("-11") }
        let at = try #require(mine.map { $0.times[2] }.max())
        let snapshot = DeviceSnapshot(
            installation: installation, at: at,
            activities: mine.prefix(2).map {
                .init(activity: $0.id, attributesType: "RideAttributes", activityState: .active, contentTimestamp: 1)
            } + [.init(activity: "ADOPTED-1", attributesType: "RideAttributes", activityState: .active)])
        await answers.add("resync") {
            try await ledger.resync(snapshot: snapshot, app: SealingEquivalenceTests.apps[1]).json
        }

        let appless = plan.activities.filter { $0.app == nil }
        var truth: [String] = []
        for (index, activity) in appless.enumerated() where index % 3 == 0 {
            let done = index % 2 == 0 ? "true" : "false"
            truth.append(#"{"activity":"\#(activity.id)","state":{"eta":\#(index)},"done":\#(done)}"#)
        }
        truth.append(#"{"activity":"GHOST-1","state":{"eta":1}}"#)
        truth.append("not json")
        let truthPath = directory.file("truth-\(name).jsonl")
        try truth.joined(separator: "\n").write(toFile: truthPath, atomically: true, encoding: .utf8)
        let nightAt = try #require(appless.map { $0.times[3] }.max())
        await answers.add("nightly run") {
            try await ledger.nightly(truth: try JSONLinesReader(path: truthPath), runID: "night-1", at: nightAt).json
        }
        await answers.add("nightly report") { try await ledger.nightlyReport(run: "night-1")?.json ?? .null }
        answers.add("lastPosition after writes", .int(try await ledger.lastPosition()))
        answers.add("verify after writes", try await ledger.verify().json.dropping(["digest"]))
        for app in SealingEquivalenceTests.apps {
            var exported: [UInt8] = []
            try await ledger.exportLines(app: app) { line, recorded in
                exported += Array("\(recorded.position) \(recorded.version) ".utf8) + line + [0x0A]
                return true
            }
            answers.add("export after writes \(app ?? "-")", exported)
        }
    }

    static func withoutAsOf(_ value: JSONValue) -> JSONValue { value.dropping(["asOf"]) }
}

extension JSONValue {
    /// The object without the named top-level members (another value unchanged).
    func dropping(_ keys: Set<String>) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object.members.removeAll { keys.contains($0.key) }
        return .object(object)
    }
}
