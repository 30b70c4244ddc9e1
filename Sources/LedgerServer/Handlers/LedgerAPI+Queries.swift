internal import Foundation
import ServiceLifecycle

extension LedgerAPI {
    func getState(_ input: Operations.getState.Input) async throws -> Operations.getState.Output {
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let json = try await backend.stateJSON(app: Caller.app(), activity: input.path.activity, at: at)
        return .ok(.init(body: .json(try Self.document(json))))
    }

    func getTimeline(_ input: Operations.getTimeline.Input) async throws -> Operations.getTimeline.Output {
        let from = try TimeParameter.parse(input.query.from, name: "from")
        let to = try TimeParameter.parse(input.query.to, name: "to")
        // `from` after `to` is an empty window (no entries), not an error: each is valid on its own.
        let json = try await backend.timelineJSON(app: Caller.app(), activity: input.path.activity, from: from, to: to)
        return .ok(.init(body: .json(try Self.document(json))))
    }

    func getActivityAudit(_ input: Operations.getActivityAudit.Input) async throws
        -> Operations.getActivityAudit.Output
    {
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let audit = try Self.document(
            await backend.auditJSON(app: Caller.app(), activity: input.path.activity, at: at))
        metrics.recordVerdicts(Self.verdicts(in: audit))
        return .ok(.init(body: .json(audit)))
    }

    func getUpdateAudit(_ input: Operations.getUpdateAudit.Input) async throws -> Operations.getUpdateAudit.Output {
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let audit = try Self.document(await backend.updateAuditJSON(app: Caller.app(), event: input.path.event, at: at))
        metrics.recordVerdicts((audit["audits"]?.arrayValue ?? []).flatMap(Self.verdicts(in:)))
        return .ok(.init(body: .json(audit)))
    }

    func listActivities(_ input: Operations.listActivities.Input) async throws -> Operations.listActivities.Output {
        let query = input.query
        let cursor = try query.cursor.map { text in
            guard let cursor = PageCursor.decode(text) else {
                throw APIError.invalidParameter(
                    "cursor", "not a cursor this server returned; pass the previous page's nextCursor unchanged")
            }
            return cursor
        }
        let activityQuery = ActivityQuery(
            phase: query.phase?.rawValue,
            installation: query.installation,
            attributesType: query.attributesType,
            token: query.token,
            channel: query.channel,
            at: try TimeParameter.parse(query.at, name: "at"),
            limit: try Self.limit(query.limit, default: 100, max: 1000),
            cursor: cursor
        )
        var page = try Self.document(await backend.activitiesJSON(app: Caller.app(), query: activityQuery))
        if case .object(var members) = page, case .string(let next)? = members["nextCursor"] {
            members["nextCursor"] = .string(PageCursor.encode(next))
            page = .object(members)
        }
        return .ok(.init(body: .json(page)))
    }

    func getFeed(_ input: Operations.getFeed.Input) async throws -> Operations.getFeed.Output {
        let app = try Caller.app()
        let after = input.query.after ?? 0
        guard after >= 0 else { throw APIError.invalidParameter("after", "must be 0 or more, got \(after)") }
        let limit = try Self.limit(input.query.limit, default: 1000, max: 10000)
        let wait = input.query.wait ?? 0
        guard wait.isFinite, (0...60).contains(wait) else {
            throw APIError.invalidParameter("wait", "must be between 0 and 60 seconds, got \(wait)")
        }
        // The server may hold requests for less than the client asked (a shorter poll is still correct).
        let heldFor = min(wait, configuration.maxFeedWaitSeconds)
        let deadline = ContinuousClock.now + .milliseconds(Int64(heldFor * 1000))
        var page = try await backend.feed(app: app, after: after, limit: limit)
        // Long-poll: wait for an append (signalled or polled) until the deadline. On graceful shutdown the server
        // drains in-flight requests, so a waiting poll answers (empty) within one poll interval instead.
        while page.events.isEmpty, ContinuousClock.now < deadline, !Task.isCancelled, !Task.isShuttingDownGracefully {
            let remaining = deadline - ContinuousClock.now
            await appendSignal.wait(timeout: min(remaining, configuration.feedPollInterval))
            page = try await backend.feed(app: app, after: after, limit: limit)
        }
        let events = try page.events.map(Self.document)
        return .ok(.init(body: .json(.init(events: events, lastPosition: max(page.lastPosition, after)))))
    }

    /// The `verdict` of each delivery of a SPEC audit document.
    static func verdicts(in audit: JSONValue) -> [String] {
        (audit["deliveries"]?.arrayValue ?? []).compactMap { $0["verdict"]?.stringValue }
    }
}
