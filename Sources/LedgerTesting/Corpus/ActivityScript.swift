/// The life of one generated activity: request, token, updates with pushes and observations, end.
struct ActivityScript {
    enum Kind: CaseIterable { case ride, delivery, score }

    let kind: Kind
    let key: String
    let stream: String
    let installation: String
    let token: String
    var at: Int64
    private var lastUpdateID = ""
    private var timestamp: Int64
    private var step = 0
    private var shapes: ContentShapes

    init(number: Int, startAt: Int64, random: inout SeededRandom) {
        kind = random.pick(Kind.allCases)
        switch kind {
        case .ride: key = "RIDE-\(100_000 + number)"
        case .delivery: key = "ORDER-\(500_000 + number)"
        case .score: key = "MATCH-\(900_000 + number)"
        }
        stream = "activity:" + key
        installation = random.uuid()
        token = random.hex(bytes: 32)
        at = startAt
        timestamp = startAt / 1000
        shapes = ContentShapes(kind: kind, key: key, random: &random)
    }

    mutating func events(count: Int, random: inout SeededRandom) -> [CorpusEvent] {
        var events: [CorpusEvent] = []
        events.reserveCapacity(count)
        events.append(request(random: &random))
        for index in 1..<max(1, count) {
            at += index == 1 ? Int64.random(in: 200...900, using: &random) : Int64.random(in: 4_000...40_000, using: &random)
            let remaining = count - index
            if index == 1 {
                events.append(event("token", source: "app", random: &random, JSONText.object([
                    ("token", JSONText.quote(token)), ("environment", "\"production\""),
                ])))
            } else if remaining == 2 && count >= 6 {
                events.append(end(random: &random))
            } else if events.last?.type == "update" || events.last?.type == "end" {
                at = events[events.count - 1].at + Int64.random(in: 60...400, using: &random)
                events.append(push(random: &random))
            } else if Int.random(in: 0..<5, using: &random) == 0 && !lastUpdateID.isEmpty {
                events.append(observe(random: &random))
            } else {
                events.append(update(random: &random))
            }
        }
        return events
    }

    private func event(_ type: String, source: String, random: inout SeededRandom, _ data: String) -> CorpusEvent {
        CorpusEvent(id: random.uuid(), stream: stream, type: type, at: at, source: source, data: data)
    }

    private mutating func content(random: inout SeededRandom) -> String {
        step += 1
        let stale = JSONText.rfc3339(milliseconds: at + 15 * 60_000)
        return JSONText.object([
            ("state", shapes.state(step: step, at: at, random: &random)), ("staleDate", JSONText.quote(stale)),
            ("relevanceScore", String(Int.random(in: 1...10, using: &random) * 10)),
        ])
    }

    private mutating func request(random: inout SeededRandom) -> CorpusEvent {
        let data = JSONText.object([
            ("attributesType", JSONText.quote(shapes.attributesType)), ("attributes", shapes.attributes),
            ("content", content(random: &random)), ("pushType", "\"token\""), ("style", "\"standard\""),
            ("origin", "\"app\""), ("installation", JSONText.quote(installation)),
        ])
        return event("request", source: "app", random: &random, data)
    }

    private mutating func update(random: inout SeededRandom) -> CorpusEvent {
        timestamp = max(timestamp + 1, at / 1000)
        var members = [("content", content(random: &random)), ("timestamp", String(timestamp))]
        if Int.random(in: 0..<4, using: &random) == 0 {
            members.append(("alert", shapes.alert(random: &random)))
        }
        members.append(("priority", Int.random(in: 0..<3, using: &random) == 0 ? "5" : "10"))
        let made = event("update", source: "server", random: &random, JSONText.object(members))
        lastUpdateID = made.id
        return made
    }

    private mutating func end(random: inout SeededRandom) -> CorpusEvent {
        timestamp = max(timestamp + 1, at / 1000)
        let made = event("end", source: "server", random: &random, JSONText.object([
            ("content", content(random: &random)), ("timestamp", String(timestamp)),
            ("dismissalPolicy", "\"default\""),
        ]))
        lastUpdateID = made.id
        return made
    }

    private mutating func push(random: inout SeededRandom) -> CorpusEvent {
        let apnsID = random.uuid().uppercased()
        let status = Int.random(in: 0..<50, using: &random) == 0 ? "410" : "200"
        var members = [
            ("refersTo", JSONText.quote(lastUpdateID)), ("status", status), ("apnsId", JSONText.quote(apnsID)),
            ("token", JSONText.quote(token)), ("priority", "10"),
        ]
        if status == "410" {
            members.insert(("reason", "\"ExpiredToken\""), at: 2)
            members.append(("apnsTimestamp", String(at)))
        }
        return event("push", source: "apns", random: &random, JSONText.object(members))
    }

    private mutating func observe(random: inout SeededRandom) -> CorpusEvent {
        event("observe", source: "device", random: &random, JSONText.object([
            ("activityState", "\"active\""), ("contentTimestamp", String(timestamp)),
            ("contentHash", JSONText.quote(random.hex(bytes: 8))),
        ]))
    }
}
