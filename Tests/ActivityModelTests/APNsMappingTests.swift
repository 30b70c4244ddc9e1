import ActivityModel
import Testing

@Suite("APNs mapping")
struct APNsMappingTests {
    @Test("every payload in shared/reference parses", arguments: Scenario.files(in: "apns"))
    func referencePayload(_ path: String) throws {
        let payload = try APNsMapping.parse(Array(try Scenario.data(path)))
        #expect(payload.timestamp == 1_700_000_000 || payload.timestamp == 1_700_002_000)
        #expect(payload.content != nil)
        if payload.event == .start {
            #expect(payload.attributesType == "RideAttributes")
            #expect(payload.alert != nil)
        }
        // And back: the payload we build from it parses to the same thing.
        #expect(try APNsMapping.parse(APNsMapping.json(payload)) == payload)
    }

    @Test("there are five reference payloads")
    func referenceCount() { #expect(Scenario.files(in: "apns").count == 5) }

    @Test("dates are Unix seconds both ways, content-state passes through untouched")
    func dates() throws {
        let payload = try APNsMapping.parse(Array(try Scenario.data("apns/reference-ride-update.json")))
        #expect(payload.content?.staleDate == Instant(seconds: 1_700_000_300))
        #expect(payload.content?.relevanceScore == 100)
        #expect(payload.content?.state["distanceRemaining"] == .number(JSONNumber(literal: "0.0")))
        let end = try APNsMapping.parse(Array(try Scenario.data("apns/reference-ride-end.json")))
        #expect(end.dismissalDate == Instant(seconds: 1_700_005_600))
        let json = APNsMapping.json(payload).compactString
        #expect(json.contains(#""stale-date":1700000300"#))
        #expect(json.contains(#""distanceRemaining":0.0"#))
    }

    @Test("an end payload maps the dismissal policy to dismissal-date")
    func endPayload() {
        let immediate = APNsMapping.end(nil, timestamp: 100, dismissalPolicy: .immediate)
        #expect(immediate["aps"]?["dismissal-date"] == .int(100))
        let after = APNsMapping.end(nil, timestamp: 100, dismissalPolicy: .after(Instant(seconds: 500)))
        #expect(after["aps"]?["dismissal-date"] == .int(500))
        #expect(APNsMapping.end(nil, timestamp: 100)["aps"]?["dismissal-date"] == nil)
    }

    @Test("a token push and its 410 answer become an update and a push event")
    func rawRequestToEvents() throws {
        let body = try JSONParser.parse(try Scenario.data("apns/reference-ride-update.json"))
        let request = APNsRequest(
            path: "/3/device/abcd01",
            headers: ["apns-push-type": "liveactivity", "apns-topic": "com.x.push-type.liveactivity", "apns-priority": "10"],
            body: body)
        let response = APNsResponse(
            status: 410, headers: ["apns-id": "ID-1"], body: ["reason": "Unregistered", "timestamp": 1_700_000_100_000])
        let at = Instant(seconds: 1_700_000_001)
        let events = try APNsMapping.events(
            request: request, response: response, activity: "RIDE-1", at: at, eventID: "u", pushID: "p")
        #expect(events.count == 2)
        #expect(events[0].type == .update)
        #expect(events[0].stream == .activity("RIDE-1"))
        guard case .push(let push) = events[1].data else { Issue.record("no push"); return }
        #expect(push.refersTo == "u")
        #expect(push.status == 410)
        #expect(push.reason == "Unregistered")
        #expect(push.token == "abcd01")
        #expect(push.apnsId == "ID-1")
        #expect(push.priority == 10)
        #expect(push.apnsTimestamp == Instant(milliseconds: 1_700_000_100_000))
        // The events survive the interchange codec.
        for event in events { #expect(try EventCodec.decode(EventCodec.encode(event)) == event) }
    }

    @Test("a push-to-start becomes a request; a broadcast goes to the channel stream")
    func startAndBroadcast() throws {
        let start = try JSONParser.parse(try Scenario.data("apns/reference-ride-push-to-start.json"))
        let events = try APNsMapping.events(
            request: APNsRequest(path: "/3/device/ff", headers: [:], body: start), response: APNsResponse(status: 200),
            activity: "RIDE-2", at: Instant(seconds: 1_700_000_000), eventID: "r", pushID: "p")
        guard case .request(let request) = events[0].data else { Issue.record("no request"); return }
        #expect(request.origin == .pushToStart)
        #expect(request.attributesType == "RideAttributes")

        let update = try JSONParser.parse(try Scenario.data("apns/reference-curl-update.json"))
        let broadcast = try APNsMapping.events(
            request: APNsRequest(path: "/4/broadcasts/apps/com.x", headers: ["apns-channel-id": "CH1"], body: update),
            response: APNsResponse(status: 200), activity: nil, at: Instant(seconds: 1_700_000_000), eventID: "u",
            pushID: "p")
        #expect(broadcast.allSatisfy { $0.stream == .channel("CH1") })
        #expect(throws: EventDecodingError.self) {
            try APNsMapping.events(
                request: APNsRequest(path: nil, headers: ["apns-channel-id": "CH1"], body: start),
                response: APNsResponse(status: 200), activity: nil, at: Instant(seconds: 0), eventID: "r", pushID: "p")
        }
    }

    @Test("a bad aps payload is refused naming the field")
    func badPayload() {
        do {
            _ = try APNsMapping.parse(["aps": ["event": "update", "timestamp": "soon", "content-state": [:]]])
            Issue.record("accepted")
        } catch {
            #expect(error.field == "aps.timestamp")
        }
    }
}
