extension ActivityTimeline {
    enum AttemptOutcome: Equatable {
        case success
        case failure(String)
    }

    /// One push attempt's outcome for the event it carried.
    func outcome(of push: Push, carrying delivery: Recorded?) -> AttemptOutcome {
        outcome(of: push, carryingEnd: delivery?.endedActivity == true)
    }

    /// `outcome(of:carrying:)` for a carried event that did (or did not) end the activity.
    func outcome(of push: Push, carryingEnd: Bool) -> AttemptOutcome {
        let at = push.at
        if wasOver(at: at, index: push.index), !carryingEnd {
            return .failure("afterEnd")
        }
        if let token = push.token, let death = deathTime(of: token), death <= at,
            !killers.contains(push.position)
        {
            return .failure("deadToken")
        }
        if push.data.isSuccess { return .success }
        return .failure(push.data.reason ?? "HTTP \(push.data.status)")
    }

    /// Pushes carrying the event `id`, recorded before `limit` (walk index).
    func attempts(for id: String, before limit: Int = .max) -> [Push] {
        guard let all = pushesByRef[id] else { return [] }
        return all.compactMap { pushes[$0].index < limit ? pushes[$0] : nil }
    }

    /// The best attempt: any success wins; otherwise the latest failure's reason. Nil without attempts.
    func bestOutcome(for delivery: Recorded?, id: String, before limit: Int = .max) -> AttemptOutcome? {
        bestOutcome(carryingEnd: delivery?.endedActivity == true, id: id, before: limit)
    }

    /// `bestOutcome(for:id:before:)` without copying the attempts (displayed content asks it for every
    /// delivery, once per timeline entry).
    func bestOutcome(carryingEnd: Bool, id: String, before limit: Int) -> AttemptOutcome? {
        guard let all = pushesByRef[id] else { return nil }
        var last: AttemptOutcome?
        // Recorded in walk order, so the first one at or past `limit` ends the attempts known before it.
        for p in all {
            if pushes[p].index >= limit { break }
            let result = outcome(of: pushes[p], carryingEnd: carryingEnd)
            if result == .success { return .success }
            last = result
        }
        return last
    }

    /// What an event's best attempt follows from (`attemptTallies`).
    struct AttemptTally {
        /// Attempts that succeed for a carried event that does not end the activity, and for one that does (a push
        /// after the end fails `afterEnd` only for the first).
        var successes = 0
        var successesCarryingEnd = 0
        /// Index in `pushes` of the newest attempt.
        var newest: Int

        mutating func add(_ p: Int, _ counts: (Int, Int)) {
            newest = p
            successes += counts.0
            successesCarryingEnd += counts.1
        }
    }

    /// `bestOutcome(carryingEnd:id:before: .max)` from `attemptTallies`: any success wins, else the newest attempt's
    /// outcome. Nil without attempts.
    func currentBest(_ id: String, carryingEnd: Bool) -> AttemptOutcome? {
        guard let tally = attemptTallies[id] else { return nil }
        if (carryingEnd ? tally.successesCarryingEnd : tally.successes) > 0 { return .success }
        return outcome(of: pushes[tally.newest], carryingEnd: carryingEnd)
    }

    /// Adds the push at `pushes[p]`, the newest walked, to its event's tally and to its token's pushes.
    mutating func noteAttempt(_ p: Int) {
        let push = pushes[p]
        let counts = successCounts(of: push)
        attemptTallies[push.data.refersTo, default: AttemptTally(newest: p)].add(p, counts)
        if let token = push.token { pushesByToken[token, default: []].append(p) }
    }

    /// Rebuilds every tally from the attempts (after the end, which every outcome may depend on).
    mutating func recountAttempts() {
        for (id, all) in pushesByRef {
            guard let first = all.first else { continue }
            var tally = AttemptTally(newest: first)
            for p in all { tally.add(p, successCounts(of: pushes[p])) }
            attemptTallies[id] = tally
        }
    }

    /// Whether an attempt succeeds for a carried event that does not end the activity, and for one that does: the
    /// first is the second unless the attempt came after the end (`outcome(of:carryingEnd:)`).
    private func successCounts(of push: Push) -> (Int, Int) {
        guard outcome(of: push, carryingEnd: true) == .success else { return (0, 0) }
        return (wasOver(at: push.at, index: push.index) ? 0 : 1, 1)
    }

    /// `token` is dead from `from` now, earlier than `known` (nil: it was not dead): its attempts from `from` up to
    /// `known` no longer succeed. Returns the events whose tallies changed.
    mutating func uncountAttempts(to token: String, from: Instant, before known: Instant?) -> Set<String> {
        guard let sent = pushesByToken[token] else { return [] }
        var changed: Set<String> = []
        for p in sent[sent.partitionPoint(where: { pushes[$0].at >= from })...] {
            let push = pushes[p]
            if let known, push.at >= known { break }
            // Alive at its `at` before, dead now: it counted as a success if it was one and not after the end (a
            // killer is a 410, never a success).
            guard push.data.isSuccess else { continue }
            attemptTallies[push.data.refersTo]?.successesCarryingEnd -= 1
            if !wasOver(at: push.at, index: push.index) { attemptTallies[push.data.refersTo]?.successes -= 1 }
            changed.insert(push.data.refersTo)
        }
        return changed
    }

    /// A content the device may show: where it counts in the walk, its timestamp, and where it comes from.
    struct Candidate {
        var index: Int
        var timestamp: Int64
        /// Index in `deliveries`, or -1 for the request's content.
        var delivery: Int
    }

    /// Contents the device may show, as known before walk index `limit`, in walk order: the request's content
    /// and every update/end content not known to be rejected.
    func candidates(before limit: Int) -> [Candidate] {
        var result: [Candidate] = []
        var request = requestCandidate(before: limit)
        // Deliveries are recorded in walk order: indices ascend.
        for d in deliveries.indices {
            if deliveries[d].index >= limit { break }
            // Everything walked so far: what the walk keeps up to date (`eligible`).
            guard limit == .max && tracksDisplayed ? eligible[d] : isCandidate(d, before: limit) else { continue }
            if let pending = request, pending.index < deliveries[d].index {
                result.append(pending)
                request = nil
            }
            result.append(Candidate(index: deliveries[d].index, timestamp: deliveries[d].timestamp, delivery: d))
        }
        if let request { result.append(request) }
        return result
    }

    /// The request's content as a candidate known before `limit`, unless too large or a push to start that
    /// never got through (which shows nothing).
    func requestCandidate(before limit: Int) -> Candidate? {
        guard requestIndex < limit, !requestTooLarge else { return nil }
        let id = Self.eventID(requestEvent)
        let best =
            limit == .max && tracksDisplayed
            ? currentBest(id, carryingEnd: false) : bestOutcome(carryingEnd: false, id: id, before: limit)
        if case .failure? = best { return nil }
        return Candidate(index: requestIndex, timestamp: requestEvent.event.at.seconds, delivery: -1)
    }

    /// Whether delivery `d` is content the device may show, as known before walk index `limit`: it has content,
    /// was not rejected when recorded, and no attempt known by then says it failed.
    func isCandidate(_ d: Int, before limit: Int) -> Bool {
        guard deliveries[d].content != nil, deliveries[d].ownRejection == nil else { return false }
        if let attemptIndex {
            // Any success before `limit` makes it the best attempt; else any attempt before it is a failure;
            // with none, only a token already dead when it was recorded keeps it off the screen.
            if attemptIndex.firstSuccess[d] < limit { return true }
            if attemptIndex.first[d] < limit { return false }
            return !deliveries[d].deadTokenAtRecord
        }
        return isCandidate(
            d, best: bestOutcome(carryingEnd: deliveries[d].endedActivity, id: deliveries[d].id, before: limit))
    }

    /// Whether delivery `d`, with content and not rejected when recorded, may show given its best attempt.
    private func isCandidate(_ d: Int, best: AttemptOutcome?) -> Bool {
        if case .failure? = best { return false }
        if deliveries[d].deadTokenAtRecord, best != .success { return false }
        return true
    }

    /// `isCandidate(d, before: .max)` from `attemptTallies`, for the walks that keep `eligible`.
    func isEligibleNow(_ d: Int) -> Bool {
        guard deliveries[d].content != nil, deliveries[d].ownRejection == nil else { return false }
        return isCandidate(d, best: currentBest(deliveries[d].id, carryingEnd: deliveries[d].endedActivity))
    }

    /// Indexes the finished walk's attempts (see `AttemptIndex`). The walk must not take more events after it.
    mutating func indexAttempts() {
        var first = [Int](repeating: .max, count: deliveries.count)
        var firstSuccess = first
        for d in deliveries.indices {
            guard let all = pushesByRef[deliveries[d].id], let earliest = all.first else { continue }
            first[d] = pushes[earliest].index
            if let success = all.first(where: {
                outcome(of: pushes[$0], carryingEnd: deliveries[d].endedActivity) == .success
            }) {
                firstSuccess[d] = pushes[success].index
            }
        }
        attemptIndex = AttemptIndex(first: first, firstSuccess: firstSuccess)
    }

    /// Keeps `attemptTallies`, and `eligible[d]` equal to `isCandidate(d, before: .max)`, after the walk changed
    /// what they depend on: the newest push, which carried `id` (nil: the end, which every delivery depends on).
    mutating func refreshCandidates(carrying id: String?) {
        guard tracksDisplayed else { return }
        if let id {
            noteAttempt(pushes.count - 1)
            refreshEligibility(of: id)
        } else {
            recountAttempts()
            refreshEligibility(of: deliveries.indices)
            shownIsKnown = false
        }
    }

    /// `refreshCandidates` after the newest push, a 410, dated its token's death from `from`, earlier than `known`
    /// (nil: the token was not dead): only its own event and the events of the token's attempts between the two
    /// deaths change.
    mutating func refreshCandidates(afterDeathOf token: String, from: Instant, before known: Instant?) {
        guard tracksDisplayed else { return }
        noteAttempt(pushes.count - 1)
        var changed = uncountAttempts(to: token, from: from, before: known)
        changed.insert(pushes[pushes.count - 1].data.refersTo)
        for id in changed { refreshEligibility(of: id) }
    }

    /// Refreshes the deliveries of the event `id`, and what is displayed when the request's attempts changed.
    private mutating func refreshEligibility(of id: String) {
        refreshEligibility(of: deliveriesByID[id] ?? [])
        // The request's own attempts decide whether it can show (a push-to-start that failed shows nothing).
        if id == Self.eventID(requestEvent) { shownIsKnown = false }
    }

    private mutating func refreshEligibility(of indices: some Sequence<Int>) {
        for d in indices {
            let now = isEligibleNow(d)
            if now != eligible[d] {
                eligible[d] = now
                eligibleTimestamps.set(d, now ? deliveries[d].timestamp : nil)
                shownIsKnown = false
            }
        }
    }

    /// Computes what is displayed after everything walked and keeps it (`shownCandidate`) for the next events.
    mutating func rememberDisplayed() {
        guard tracksDisplayed, !shownIsKnown else { return }
        shownCandidate = displayedNow()
        shownIsKnown = true
    }

    /// `displayedCandidate(before: .max)` for the walks that keep `eligible` (`tracksDisplayed`), without a pass
    /// over the candidates: the eligible deliveries' timestamps are slots of `eligibleTimestamps`, so the newest
    /// one in a range, and the newest not newer than what an observation showed, are O(log n) questions (held
    /// equal to the definition by the timeline's property tests against a fold of each prefix).
    func displayedNow() -> Candidate? {
        let request = requestCandidate(before: .max)
        guard let o = lastShowing.map({ observations[$0] }), let observed = o.data.contentTimestamp else {
            return newer(newestDelivery(in: 0..<deliveries.count), request)
        }
        let observedHash = o.data.contentHash
        // Deliveries before the observation are `0..<split` (walk order).
        let split = deliveries.partitionPoint(where: { $0.index > o.index })
        let requestBefore = request.flatMap { $0.index < o.index ? $0 : nil }
        // What the device showed at the observation: the last candidate before it with what it showed…
        var base: Candidate?
        for d in (contentsByTimestamp[observed] ?? []).reversed() where d < split && eligible[d] {
            if observedHash == nil || observedHash == deliveries[d].content!.contentHash {
                base = Candidate(index: deliveries[d].index, timestamp: observed, delivery: d)
                break
            }
        }
        if let r = requestBefore, r.timestamp == observed, observedHash == nil || observedHash == contentHash(of: r),
            base.map({ r.index > $0.index }) ?? true
        {
            base = r
        }
        // …else the newest candidate before it not newer than that, as if shown at the observation…
        if base == nil {
            let bound = eligibleTimestamps.largest(atMost: observed, in: 0..<split)
            let newest = eligibleTimestamps.last(in: 0..<split, holding: bound).map {
                Candidate(index: deliveries[$0].index, timestamp: bound, delivery: $0)
            }
            base = newer(newest, requestBefore.flatMap { $0.timestamp <= observed ? $0 : nil }).map {
                Candidate(index: o.index, timestamp: $0.timestamp, delivery: $0.delivery)
            }
        }
        // …then whatever arrived after it.
        let after = newer(newestDelivery(in: split..<deliveries.count), request.flatMap { $0.index > o.index ? $0 : nil })
        return newer(base, after)
    }

    /// The eligible delivery in `range` with the newest timestamp (the later one on a tie).
    private func newestDelivery(in range: Range<Int>) -> Candidate? {
        let newest = eligibleTimestamps.largest(in: range)
        return eligibleTimestamps.last(in: range, holding: newest).map {
            Candidate(index: deliveries[$0].index, timestamp: newest, delivery: $0)
        }
    }

    /// The newer of two candidates: the newer timestamp, on a tie the later in the walk (as `newest` picks).
    private func newer(_ a: Candidate?, _ b: Candidate?) -> Candidate? {
        guard let a else { return b }
        guard let b else { return a }
        return (a.timestamp, a.index) > (b.timestamp, b.index) ? a : b
    }

    /// What a candidate shows.
    func snapshot(of candidate: Candidate) -> ContentSnapshot {
        guard candidate.delivery >= 0 else {
            return ContentSnapshot(
                request.content, timestamp: requestEvent.event.at.seconds, event: Self.eventID(requestEvent))
        }
        let d = candidate.delivery
        return ContentSnapshot(deliveries[d].content!, timestamp: deliveries[d].timestamp, event: deliveries[d].id)
    }

    /// `ContentSnapshot.contentHash` of what a candidate shows.
    func contentHash(of candidate: Candidate) -> String {
        candidate.delivery < 0 ? request.content.contentHash : deliveries[candidate.delivery].content!.contentHash
    }

    /// The displayed content as known before walk index `limit`: the newest-timestamp candidate (an equal
    /// timestamp recorded later wins), with the last device observation overriding what came before it.
    func displayed(before limit: Int = .max) -> ContentSnapshot? {
        if limit == .max, shownIsKnown { return shownCandidate.map(snapshot(of:)) }
        return displayedCandidate(before: limit).map(snapshot(of:))
    }

    /// The candidate `displayed(before:)` shows.
    func displayedCandidate(before limit: Int) -> Candidate? {
        let all = candidates(before: limit)
        guard
            let o = observations.lastIndex(where: { $0.index < limit && $0.data.contentTimestamp != nil }),
            let observed = observations[o].data.contentTimestamp
        else { return newest(all) }
        let observedAt = observations[o].index
        let observedHash = observations[o].data.contentHash
        // What the device showed at the observation…
        let before = all.filter { $0.index < observedAt }
        let matching = before.filter {
            $0.timestamp == observed && (observedHash == nil || observedHash == contentHash(of: $0))
        }
        let base = matching.last ?? newest(before.filter { $0.timestamp <= observed }).map {
            Candidate(index: observedAt, timestamp: $0.timestamp, delivery: $0.delivery)
        }
        // …then whatever arrived after it.
        let after = all.filter { $0.index > observedAt }
        return newest((base.map { [$0] } ?? []) + after)
    }

    private func newest(_ candidates: [Candidate]) -> Candidate? {
        var best: Candidate?
        for candidate in candidates where best.map({ candidate.timestamp >= $0.timestamp }) ?? true {
            best = candidate
        }
        return best
    }
}
