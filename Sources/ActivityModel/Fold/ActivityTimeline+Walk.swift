extension ActivityTimeline {
    /// The single ordered pass.
    mutating func walk() {
        for (index, positioned) in events.enumerated() { step(positioned, index: index) }
        advance(to: asOf)
    }

    /// Appends one relevant event that sorts after every event walked so far and walks it: the incremental
    /// form of `walk()` that `ActivityFold.timeline` uses to fold once instead of once per event.
    mutating func append(_ positioned: PositionedEvent) {
        events.append(positioned)
        step(positioned, index: events.count - 1)
    }

    /// Moves the walk's clock to `time` (not before the last event walked): the state is then as of `time`,
    /// exactly as if the walk had been built with `asOf: time`.
    mutating func settle(asOf time: Instant) {
        asOf = time
        advance(to: time)
    }

    /// Walks the event at walk index `index`: first the deadlines its `at` reaches, then the event.
    mutating func step(_ positioned: PositionedEvent, index: Int) {
        let event = positioned.event
        advance(to: event.at)
        let own = event.stream.kind == .activity
        if own {
            ownEvents += 1
            lastPosition = max(lastPosition, positioned.position)
            if firstEvent == nil { firstEvent = Self.eventID(positioned) }
            lastEvent = Self.eventID(positioned)
        }
        switch event.data {
        case .request(let r):
            guard own, positioned.position == requestEvent.position else { return }
            requestIndex = index
            shownIsKnown = false
            if case .channel(let id)? = r.pushType, !channels.contains(id) { channels.append(id) }
            intended = ContentSnapshot(r.content, timestamp: event.at.seconds, event: Self.eventID(positioned))
        case .token(let t):
            tokens.append(
                TokenRecord(
                    token: t.token, at: event.at, environment: t.environment, deadFrom: nil,
                    event: Self.eventID(positioned)))
            counters.tokens += 1
        case .update(let u):
            if !own { guard isSubscribed(to: event.stream.id) else { return } }
            record(positioned, index: index, type: .update, timestamp: u.timestamp, content: u.content, policy: nil)
        case .end(let e):
            if !own { guard isSubscribed(to: event.stream.id) else { return } }
            record(
                positioned, index: index, type: .end, timestamp: e.timestamp, content: e.content,
                policy: e.dismissalPolicy ?? .default)
        case .dismiss(let d):
            counters.dismissals += 1
            if removedAt == nil {
                markOver(at: event.at, index: index)
                removedAt = event.at
                dismissedBy = d.by == .user ? .user : .system
            }
        case .push(let p):
            if !own { guard isSubscribed(to: event.stream.id) else { return } }
            counters.pushes += 1
            if !p.isSuccess { counters.failedPushes += 1 }
            let token = own ? (p.token ?? currentToken(at: event.at)?.token) : nil
            var superseded = false
            if own, let sent = p.token, let current = currentToken(at: event.at), current.token != sent,
                tokens.contains(where: { $0.token == sent })
            {
                superseded = true
                counters.pushesToSupersededToken += 1
            }
            let push = Push(
                index: index, at: event.at, position: positioned.position, data: p, token: token,
                toSupersededToken: superseded)
            pushesByRef[p.refersTo, default: []].append(pushes.count)
            pushes.append(push)
            if p.status == 410, let token {
                let from = p.apnsTimestamp ?? event.at
                killers.insert(positioned.position)
                let known = deaths[token]
                if known.map({ from < $0 }) ?? true {
                    deaths[token] = from
                    refreshCandidates(afterDeathOf: token, from: from, before: known)
                } else {
                    // The token was already dead as early: no other attempt's outcome moves, only this one's
                    // (a sender that keeps pushing to a dead token made every 410 a pass over every delivery).
                    refreshCandidates(carrying: p.refersTo)
                }
            } else {
                refreshCandidates(carrying: p.refersTo)
            }
        case .observe(let o):
            counters.observations += 1
            observations.append(Observation(index: index, data: o))
            if o.contentTimestamp != nil { lastShowing = observations.count - 1 }
            shownIsKnown = false
            // The device is the authority on its own lifecycle.
            if o.activityState == .ended, !isOver {
                markOver(at: event.at, index: index)
                end(at: event.at, by: .system, policy: .default)
            } else if o.activityState == .dismissed, removedAt == nil {
                markOver(at: event.at, index: index)
                removedAt = event.at
                dismissedBy = .user
            }
        case .subscribe(let s):
            if s.activity == activity, !channels.contains(event.stream.id) { channels.append(event.stream.id) }
        case .reconcile:
            counters.reconciles += 1
        case .startToken:
            return
        }
    }

    /// Records an update or end that reached the activity, deciding its own rejections at recording time.
    mutating func record(
        _ positioned: PositionedEvent, index: Int, type: EventType, timestamp: Int64, content: ActivityContent?,
        policy: DismissalPolicy?
    ) {
        let event = positioned.event
        let viaChannel = event.stream.kind == .channel ? event.stream.id : nil
        if viaChannel != nil { counters.channelUpdates += 1 }
        if type == .update { counters.updates += 1 } else { counters.ends += 1 }
        var rejection: String?
        if let drop = DeviceDrop.reason(
            contentTooLarge: content?.isTooLarge == true, timestamp: timestamp, at: event.at.milliseconds)
        {
            rejection = drop.rawValue
        } else if isOver {
            rejection = "afterEnd"
        }
        var deadToken = false
        if viaChannel == nil, event.source != .app, event.source != .device, isTokenActivity,
            let current = currentToken(at: event.at), let death = deathTime(of: current.token), death <= event.at
        {
            deadToken = true
        }
        let id = Self.eventID(positioned)
        if let content {
            intended = ContentSnapshot(content, timestamp: timestamp, event: id)
        }
        // An end the device would drop (oversize, future timestamp) or one after the end does not end it.
        let ends = type == .end && rejection == nil
        deliveries.append(
            Recorded(
                index: index, at: event.at, position: positioned.position, id: id, type: type, timestamp: timestamp,
                content: content, viaChannel: viaChannel, ownRejection: rejection, deadTokenAtRecord: deadToken,
                endedActivity: ends))
        if tracksDisplayed { track(delivery: deliveries.count - 1, index: index, timestamp: timestamp) }
        if ends, let policy {
            let by: EndedBy = event.source == .app || event.source == .device ? .app : .server
            markOver(at: event.at, index: index)
            end(at: event.at, by: by, policy: policy)
        }
    }

    /// Keeps the bookkeeping of `tracksDisplayed` for a delivery just recorded: its eligibility, and what is
    /// displayed when it is known (the newest entry of the candidates, after any observation, wins unless older).
    mutating func track(delivery d: Int, index: Int, timestamp: Int64) {
        deliveriesByID[deliveries[d].id, default: []].append(d)
        if deliveries[d].content != nil { contentsByTimestamp[timestamp, default: []].append(d) }
        eligible.append(isEligibleNow(d))
        eligibleTimestamps.set(d, eligible[d] ? timestamp : nil)
        if eligible[d], shownIsKnown, shownCandidate.map({ timestamp >= $0.timestamp }) ?? true {
            shownCandidate = Candidate(index: index, timestamp: timestamp, delivery: d)
        }
    }

    /// Remembers the first moment the activity was over, with the index of the event that made it so
    /// (-1 for a deadline, which wins ties with events stamped at the same time).
    mutating func markOver(at time: Instant, index: Int) {
        if overAt == nil {
            overAt = time
            overIndex = index
            refreshCandidates(carrying: nil)
        }
    }

    /// Whether the activity was already over when the event at (`time`, `index`) happened.
    func wasOver(at time: Instant, index: Int) -> Bool {
        guard let overAt else { return false }
        return overAt < time || (overAt == time && overIndex < index)
    }
}
