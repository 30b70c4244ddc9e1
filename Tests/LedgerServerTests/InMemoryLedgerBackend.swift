import Foundation
import LedgerServer
import Synchronization

/// A test double of the *ledger* behind the server: keeps events in memory, per app, with the contract
/// `LedgerBackend` documents (atomic batches, idempotent ids, expected versions, 404s, 422s). Its query
/// answers are minimal documents in the SPEC §7 shapes.
final class InMemoryLedgerBackend: LedgerBackend {
    struct Stored: @unchecked Sendable {
        var app: String
        var position: Int64
        var version: Int64
        var id: String
        var stream: String
        var type: String
        var object: [String: Any]
    }

    private struct State: @unchecked Sendable {
        var events: [Stored] = []
        var runs: [String: Data] = [:]
    }

    private let state = Mutex(State())

    /// Every stored event (all apps), in position order.
    var stored: [Stored] { state.withLock { $0.events } }

    func append(app: String, events: [Data], expectedVersions: [String: Int64]) async throws -> [AppendedEvent] {
        let parsed = try events.enumerated().map { index, data in try Self.validate(data, index: index) }
        return try state.withLock { state in
            for (stream, expected) in expectedVersions {
                let actual = Int64(state.events.filter { $0.app == app && $0.stream == stream }.count)
                if actual != expected {
                    throw LedgerBackendError.conflict(stream: stream, expected: expected, actual: actual)
                }
            }
            var pending = state.events
            var results: [AppendedEvent] = []
            for var object in parsed {
                let stream = object["stream"] as! String
                if let id = object["id"] as? String, let old = pending.first(where: { $0.app == app && $0.id == id }) {
                    results.append(
                        .init(id: id, stream: old.stream, position: old.position, version: old.version, duplicate: true)
                    )
                    continue
                }
                let id = object["id"] as? String ?? UUID().uuidString.lowercased()
                object["id"] = id
                object["source"] = object["source"] ?? "server"
                // Stored events carry RFC 3339 times whatever the input form, as the real ledger's do.
                if let seconds = object["at"] as? Double {
                    object["at"] = Date(timeIntervalSince1970: seconds).formatted(.iso8601)
                }
                let version = Int64(pending.filter { $0.app == app && $0.stream == stream }.count) + 1
                let position = Int64(pending.count) + 1
                pending.append(
                    .init(
                        app: app, position: position, version: version, id: id, stream: stream,
                        type: object["type"] as! String, object: object))
                results.append(.init(id: id, stream: stream, position: position, version: version, duplicate: false))
            }
            state.events = pending
            return results
        }
    }

    func ingestAPNs(app: String, exchange: Data) async throws -> [AppendedEvent] {
        let object = try JSONSerialization.jsonObject(with: exchange) as! [String: Any]
        guard let activity = object["activity"] as? String else {
            throw LedgerBackendError.notFound("no activity for this token")
        }
        let response = object["response"] as! [String: Any]
        let push: [String: Any] = [
            "stream": "activity:\(activity)", "type": "push", "at": object["at"] ?? 0, "source": "apns",
            "data": ["refersTo": "x", "status": response["status"]!],
        ]
        return try await append(
            app: app, events: [try JSONSerialization.data(withJSONObject: push)], expectedVersions: [:])
    }

    func stateJSON(app: String, activity: String, at: Date?) async throws -> Data {
        let events = try self.events(app: app, activity: activity, at: at)
        let request = events.first { $0.type == "request" }!.object["data"] as! [String: Any]
        return try Self.json([
            "activity": activity, "asOf": "2026-11-20T21:14:03Z", "phase": "active", "endedBy": NSNull(),
            "dismissedBy": NSNull(), "attributesType": request["attributesType"] ?? "",
            "attributes": request["attributes"] ?? [:],
            "displayed": NSNull(), "intended": NSNull(), "token": NSNull(), "events": events.count,
            "lastPosition": events.last!.position,
        ])
    }

    func timelineJSON(app: String, activity: String, from: Date?, to: Date?) async throws -> Data {
        let events = try self.events(app: app, activity: activity, at: nil)
        let entries = events.map {
            ["event": Self.storedObject($0), "phase": "active", "displayed": NSNull()] as [String: Any]
        }
        return try Self.json(["activity": activity, "entries": entries])
    }

    func auditJSON(app: String, activity: String) async throws -> Data {
        try Self.json(Self.audit(activity: activity, events: try events(app: app, activity: activity, at: nil)))
    }

    func updateAuditJSON(app: String, event: String) async throws -> Data {
        guard
            let update = stored.first(where: { $0.app == app && $0.id == event && ["update", "end"].contains($0.type) })
        else {
            throw LedgerBackendError.notFound("no update or end with id \(event)")
        }
        let activity = String(update.stream.dropFirst("activity:".count))
        return try Self.json(["event": event, "audits": [Self.audit(activity: activity, events: [update])]])
    }

    func activitiesJSON(app: String, query: ActivityQuery) async throws -> Data {
        let requests = stored.filter { $0.app == app && $0.type == "request" }.filter { event in
            let data = event.object["data"] as? [String: Any] ?? [:]
            return query.attributesType.map { $0 == data["attributesType"] as? String } ?? true
        }
        let offset = Int(query.cursor ?? "0") ?? 0
        let page = requests.dropFirst(offset).prefix(query.limit)
        let next: Any = offset + page.count < requests.count ? String(offset + page.count) : NSNull()
        let items = page.map { ["activity": String($0.stream.dropFirst("activity:".count)), "phase": "active"] }
        return try Self.json(["activities": items, "nextCursor": next])
    }

    func feed(app: String, after: Int64, limit: Int) async throws -> FeedPage {
        let events = stored.filter { $0.app == app && $0.position > after }.prefix(limit)
        return FeedPage(
            events: try events.map { try Self.json(Self.storedObject($0)) },
            lastPosition: events.last?.position ?? after)
    }

    func resyncJSON(app: String, snapshot: Data) async throws -> Data {
        let object = try JSONSerialization.jsonObject(with: snapshot) as! [String: Any]
        let actions = (object["activities"] as? [[String: Any]] ?? []).map {
            ["activity": $0["activity"]!, "action": "adopt", "reason": "the ledger never saw it"]
        }
        return try Self.json(["installation": object["installation"]!, "actions": actions])
    }

    func startReconciliationJSON(app: String, run: String, truth: Data, at: Date?) async throws -> Data {
        if let report = state.withLock({ $0.runs[app + "/" + run] }) { return report }
        var missing = 0
        for (number, line) in truth.split(separator: UInt8(ascii: "\n")).enumerated() {
            guard (try? JSONSerialization.jsonObject(with: Data(line))) is [String: Any] else {
                throw LedgerBackendError.unprocessable(
                    field: "line \(number + 1)", "truth line \(number + 1) is not a JSON object")
            }
            missing += 1
        }
        let summary = ["drift": 0, "leaked": 0, "expired": 0, "deadToken": 0, "undelivered": 0, "missing": missing]
        let report = try Self.json(["run": run, "summary": summary, "actions": [Any]()])
        state.withLock { $0.runs[app + "/" + run] = report }
        return report
    }

    func reconciliationJSON(app: String, run: String) async throws -> Data {
        guard let report = state.withLock({ $0.runs[app + "/" + run] }) else {
            throw LedgerBackendError.notFound("no run \(run)")
        }
        return report
    }

    func verifyJSON(app: String) async throws -> Data {
        try Self.json(["ok": true, "checked": stored.count, "firstBadPosition": NSNull(), "message": NSNull()])
    }

    func digestJSON(app: String) async throws -> Data {
        try Self.json(["position": stored.count, "hash": String(repeating: "0", count: 64)])
    }

    func lastPosition() async throws -> Int64 { Int64(stored.count) }

    // MARK: - Helpers

    private func events(app: String, activity: String, at: Date?) throws -> [Stored] {
        let events = stored.filter { $0.app == app && $0.stream == "activity:\(activity)" }
        guard events.contains(where: { $0.type == "request" }) else {
            throw LedgerBackendError.notFound("no such activity \(activity)")
        }
        return events
    }

    /// What the real ledger refuses with 422: per-type required data fields and stream kinds.
    private static func validate(_ data: Data, index: Int) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let type = object["type"] as! String
        let stream = object["stream"] as! String
        let payload = object["data"] as? [String: Any] ?? [:]
        if ["update", "end"].contains(type), payload["timestamp"] == nil {
            throw LedgerBackendError.invalidEvent(
                index: index, field: "data.timestamp", message: "\(type) needs data.timestamp")
        }
        if ["request", "token", "dismiss"].contains(type), !stream.hasPrefix("activity:") {
            throw LedgerBackendError.invalidEvent(
                index: index, field: "stream", message: "a \(type) belongs on an activity stream")
        }
        return object
    }

    private static func storedObject(_ event: Stored) -> [String: Any] {
        var object = event.object
        object["position"] = event.position
        object["version"] = event.version
        return object
    }

    private static func audit(activity: String, events: [Stored]) -> [String: Any] {
        let deliveries = events.filter { ["update", "end"].contains($0.type) }.map { event -> [String: Any] in
            let data = event.object["data"] as? [String: Any] ?? [:]
            return [
                "event": event.id, "type": event.type, "timestamp": data["timestamp"] ?? NSNull(), "verdict": "pending",
                "reason": NSNull(),
            ]
        }
        return ["activity": activity, "deliveries": deliveries]
    }

    private static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
}
