import ActivityModel
internal import Foundation
import Ledger
import ServiceLifecycle

extension LedgerAPI {
    func getState(_ input: Operations.getState.Input) async throws -> Operations.getState.Output {
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let state = try await ledger.state(activity: input.path.activity, at: at, app: Caller.app())
        return .ok(.init(body: .json(.rendered(state.json))))
    }

    func getTimeline(_ input: Operations.getTimeline.Input) async throws -> Operations.getTimeline.Output {
        let from = try TimeParameter.parse(input.query.from, name: "from")
        let to = try TimeParameter.parse(input.query.to, name: "to")
        // `from` after `to` is an empty window (no entries), not an error: each is valid on its own.
        let timeline = try await ledger.timeline(activity: input.path.activity, from: from, to: to, app: Caller.app())
        return .ok(.init(body: .json(.rendered(timeline.json))))
    }

    func getIncident(_ input: Operations.getIncident.Input) async throws -> Operations.getIncident.Output {
        let from = try TimeParameter.parse(input.query.from, name: "from")
        let to = try TimeParameter.parse(input.query.to, name: "to")
        let report = try await ledger.incident(activity: input.path.activity, from: from, to: to, app: Caller.app())
        return .ok(.init(body: .json(.rendered(report.json))))
    }

    func getActivityAudit(_ input: Operations.getActivityAudit.Input) async throws
        -> Operations.getActivityAudit.Output
    {
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let audit = try await ledger.audit(activity: input.path.activity, at: at, app: Caller.app())
        metrics.recordVerdicts(audit.deliveries.map(\.verdict.rawValue))
        return .ok(.init(body: .json(.rendered(audit.json))))
    }

    func getUpdateAudit(_ input: Operations.getUpdateAudit.Input) async throws -> Operations.getUpdateAudit.Output {
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let limit = try input.query.limit.map { try Self.limit($0, default: 100, max: 1000) }
        if let cursor = input.query.cursor {
            guard limit != nil else { throw APIError.invalidParameter("cursor", "needs limit (a cursor resumes a page)") }
            guard PageCursor.decode(cursor, kind: .subscribers) != nil else {
                throw APIError.invalidParameter(
                    "cursor", "not a cursor this list returned; pass the previous page's nextCursor unchanged")
            }
        }
        let audit = try await ledger.audit(
            update: input.path.event, at: at, app: Caller.app(), limit: limit, after: input.query.cursor)
        metrics.recordVerdicts(audit.deliveries.map(\.verdict.rawValue))
        return .ok(.init(body: .json(.rendered(audit.json))))
    }

    func listActivities(_ input: Operations.listActivities.Input) async throws -> Operations.listActivities.Output {
        let query = input.query
        if let cursor = query.cursor, PageCursor.decode(cursor, kind: .activities) == nil {
            throw APIError.invalidParameter(
                "cursor", "not a cursor this list returned; pass the previous page's nextCursor unchanged")
        }
        let filter = ActivityFilter(
            phase: query.phase.flatMap { Phase(rawValue: $0.rawValue) },
            installation: query.installation,
            attributesType: query.attributesType,
            token: query.token,
            tokenPrefix: query.tokenPrefix,
            channel: query.channel,
            app: try Caller.app(),
            at: try TimeParameter.parse(query.at, name: "at"),
            limit: try Self.limit(query.limit, default: 100, max: 1000),
            after: query.cursor
        )
        let page = try await ledger.activities(filter)
        return .ok(.init(body: .json(.rendered(page.json))))
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
        var page = try await ledger.feed(after: after, limit: limit, app: app)
        // Long-poll: wait for an append (signalled — on PostgreSQL, any process's — or polled) until the deadline. On graceful shutdown the server
        // drains in-flight requests, so a waiting poll answers (empty) within one poll interval instead. At most
        // `maxWaitingFeeds` wait at once; beyond that a poll answers at once.
        // A cursor past the head is answered at once with the head (`Ledger.feed`): nothing to wait for.
        if page.events.isEmpty, page.lastPosition >= after, heldFor > 0,
            waitingFeeds.enter(limit: configuration.maxWaitingFeeds)
        {
            defer { waitingFeeds.leave() }
            while page.events.isEmpty, ContinuousClock.now < deadline, !Task.isCancelled, !Task.isShuttingDownGracefully {
                let remaining = deadline - ContinuousClock.now
                await ledger.waitForAppend(timeout: min(remaining, configuration.feedPollInterval))
                page = try await ledger.feed(after: after, limit: limit, app: app)
            }
            // The key may have been revoked while the poll waited: what was appended since is not for it.
            try await Caller.checkStillAuthorized()
        }
        return .ok(.init(body: .json(.rendered(page.json))))
    }
}
