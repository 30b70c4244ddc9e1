/// Attributes and content-states of the three generated activity kinds.
struct ContentShapes {
    private static let names = ["Alex", "Maria", "Jun", "Priya", "Tomasz", "Lea", "Omar", "Sofia", "Kenji", "Ines"]
    private static let streets = ["Market St", "Valencia St", "Mission St", "Hayes St", "Castro St", "Folsom St"]
    private static let cars = [("Toyota", "Prius"), ("Tesla", "Model 3"), ("Honda", "Civic"), ("Kia", "Niro")]
    private static let colors = ["white", "black", "silver", "blue", "red"]
    private static let restaurants = ["Golden Noodle", "Pizza Piazza", "Green Bowl", "Taco Loco", "Sushi Kai"]
    private static let teams = ["Lions", "Tigers", "Bears", "Hawks", "Wolves", "Sharks", "Eagles", "Foxes"]

    let kind: ActivityScript.Kind
    let attributesType: String
    let attributes: String
    private let person: String
    private let homeTeam: String
    private let awayTeam: String
    private var home = 0
    private var away = 0

    init(kind: ActivityScript.Kind, key: String, random: inout SeededRandom) {
        self.kind = kind
        person = random.pick(Self.names)
        let home = random.pick(Self.teams)
        homeTeam = home
        awayTeam = random.pick(Self.teams.filter { $0 != home })
        let number = Int.random(in: 1...999, using: &random)
        switch kind {
        case .ride:
            attributesType = "RideAttributes"
            attributes = JSONText.object([
                ("rideID", JSONText.quote(key)),
                ("pickup", JSONText.quote("\(number) \(random.pick(Self.streets)), San Francisco")),
                ("dropoff", JSONText.quote("\(number * 3 % 997) \(random.pick(Self.streets)), San Francisco")),
                ("service", JSONText.quote(random.pick(["Comfort", "Pool", "XL", "Green"]))),
            ])
        case .delivery:
            attributesType = "DeliveryAttributes"
            attributes = JSONText.object([
                ("orderID", JSONText.quote(key)), ("restaurant", JSONText.quote(random.pick(Self.restaurants))),
                ("items", String(Int.random(in: 1...6, using: &random))),
                ("address", JSONText.quote("\(number) \(random.pick(Self.streets))")),
            ])
        case .score:
            attributesType = "MatchAttributes"
            attributes = JSONText.object([
                ("matchID", JSONText.quote(key)), ("league", JSONText.quote(random.pick(["Premier", "Cup", "Liga"]))),
                ("homeTeam", JSONText.quote(home)), ("awayTeam", JSONText.quote(awayTeam)),
            ])
        }
    }

    mutating func state(step: Int, at: Int64, random: inout SeededRandom) -> String {
        switch kind {
        case .ride:
            let (make, model) = random.pick(Self.cars)
            let status = step < 3 ? "driverAssigned" : step < 8 ? "enRoute" : "arriving"
            return JSONText.object([
                ("status", JSONText.quote(status)),
                ("driver", JSONText.object([
                    ("name", JSONText.quote(person)), ("rating", "4.\(Int.random(in: 60...99, using: &random))"),
                    ("vehicle", JSONText.object([
                        ("make", JSONText.quote(make)), ("model", JSONText.quote(model)),
                        ("color", JSONText.quote(random.pick(Self.colors))),
                        ("plate", JSONText.quote("7\(random.hex(bytes: 2).uppercased())")),
                    ])),
                ])),
                ("etaSeconds", String(max(0, 900 - step * 60 + Int.random(in: -30...30, using: &random)))),
                ("distanceMeters", String(Int.random(in: 100...9_000, using: &random))),
                ("location", JSONText.object([
                    ("lat", "37.\(Int.random(in: 700_000...800_000, using: &random))"),
                    ("lon", "-122.\(Int.random(in: 400_000...500_000, using: &random))"),
                ])),
            ])
        case .delivery:
            let status = ["confirmed", "preparing", "pickedUp", "outForDelivery", "nearby"][min(4, step / 2)]
            return JSONText.object([
                ("status", JSONText.quote(status)), ("courier", JSONText.quote(person)),
                ("eta", JSONText.quote(JSONText.rfc3339(milliseconds: at + Int64(Int.random(in: 5...30, using: &random)) * 60_000))),
                ("stopsBefore", String(Int.random(in: 0...3, using: &random))),
                ("message", JSONText.quote(random.pick(["On the way", "Picking up your order", "Almost there"]))),
            ])
        case .score:
            if Int.random(in: 0..<4, using: &random) == 0 { home += 1 }
            if Int.random(in: 0..<5, using: &random) == 0 { away += 1 }
            return JSONText.object([
                ("home", JSONText.object([("team", JSONText.quote(homeTeam)), ("score", String(home))])),
                ("away", JSONText.object([("team", JSONText.quote(awayTeam)), ("score", String(away))])),
                ("period", JSONText.quote(step < 10 ? "1st" : "2nd")),
                ("clock", JSONText.quote("\(Int.random(in: 0...44, using: &random)):\(Int.random(in: 10...59, using: &random))")),
                ("lastPlay", JSONText.quote("\(random.pick(["Shot", "Corner", "Foul", "Save"])) by \(person)")),
            ])
        }
    }

    func alert(random: inout SeededRandom) -> String {
        JSONText.object([
            ("title", JSONText.quote(random.pick(["Update", "Heads up", "Almost there"]))),
            ("body", JSONText.quote("\(person): \(random.pick(["arriving soon", "status changed", "new score"]))")),
            ("sound", "\"default\""),
        ])
    }
}
