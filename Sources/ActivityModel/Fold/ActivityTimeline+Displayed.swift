extension ActivityTimeline {
    enum AttemptOutcome: Equatable {
        case success
        case failure(String)
    }

    /// One push attempt's outcome for the event it carried.
    func outcome(of push: Push, carrying delivery: Recorded?) -> AttemptOutcome {
        let at = push.event.event.at
        if wasOver(at: at, index: push.index), delivery?.endedActivity != true {
            return .failure("afterEnd")
        }
        if let token = push.token, let death = deathTime(of: token), death <= at,
            !killers.contains(push.event.position)
        {
            return .failure("deadToken")
        }
        if push.data.isSuccess { return .success }
        return .failure(push.data.reason ?? "HTTP \(push.data.status)")
    }

    /// Pushes carrying the event `id`, recorded before `limit` (walk index).
    func attempts(for id: String, before limit: Int = .max) -> [Push] {
        guard let all = pushesByRef[id] else { return [] }
        return limit == .max ? all : all.filter { $0.index < limit }
    }

    /// The best attempt: any success wins; otherwise the latest failure's reason. Nil without attempts.
    func bestOutcome(for delivery: Recorded?, id: String, before limit: Int = .max) -> AttemptOutcome? {
        let tries = attempts(for: id, before: limit)
        guard !tries.isEmpty else { return nil }
        var last: AttemptOutcome?
        for attempt in tries {
            let result = outcome(of: attempt, carrying: delivery)
            if result == .success { return .success }
            last = result
        }
        return last
    }

    struct Candidate {
        var index: Int
        var snapshot: ContentSnapshot
    }

    /// Contents the device may show, as known before walk index `limit`: the request's content and every
    /// update/end content not known to be rejected.
    func candidates(before limit: Int) -> [Candidate] {
        var result: [Candidate] = []
        if requestIndex < limit, !request.content.isTooLarge {
            let id = Self.eventID(requestEvent)
            // A push-to-start that never got through shows nothing.
            if case .failure? = bestOutcome(for: nil, id: id, before: limit) {
            } else {
                result.append(
                    Candidate(
                        index: requestIndex,
                        snapshot: ContentSnapshot(request.content, timestamp: requestEvent.event.at.seconds, event: id)))
            }
        }
        for delivery in deliveries where delivery.index < limit {
            guard let content = delivery.content, delivery.ownRejection == nil else { continue }
            let best = bestOutcome(for: delivery, id: delivery.id, before: limit)
            if case .failure? = best { continue }
            if delivery.deadTokenAtRecord, best != .success { continue }
            result.append(
                Candidate(
                    index: delivery.index,
                    snapshot: ContentSnapshot(content, timestamp: delivery.timestamp, event: delivery.id)))
        }
        return result.sorted { $0.index < $1.index }
    }

    /// The displayed content as known before walk index `limit`: the newest-timestamp candidate (an equal
    /// timestamp recorded later wins), with the last device observation overriding what came before it.
    func displayed(before limit: Int = .max) -> ContentSnapshot? {
        let all = candidates(before: limit)
        guard let observation = observations.last(where: { $0.index < limit && $0.data.contentTimestamp != nil }),
            let observed = observation.data.contentTimestamp
        else { return newest(all) }
        // What the device showed at the observation…
        let before = all.filter { $0.index < observation.index }
        let matching = before.filter {
            $0.snapshot.timestamp == observed
                && (observation.data.contentHash == nil || observation.data.contentHash == $0.snapshot.contentHash)
        }
        let base = matching.last ?? newest(before.filter { $0.snapshot.timestamp <= observed }).map {
            Candidate(index: observation.index, snapshot: $0)
        }
        // …then whatever arrived after it.
        let after = all.filter { $0.index > observation.index }
        return newest((base.map { [$0] } ?? []) + after)
    }

    private func newest(_ candidates: [Candidate]) -> ContentSnapshot? {
        var best: Candidate?
        for candidate in candidates where best.map({ candidate.snapshot.timestamp >= $0.snapshot.timestamp }) ?? true {
            best = candidate
        }
        return best?.snapshot
    }
}
