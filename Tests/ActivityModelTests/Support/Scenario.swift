import ActivityModel
import Foundation

/// A scenario: events as JSON Lines (`Scenarios/<name>.jsonl`, position = line number unless a line carries
/// `"position"`) and checks (`Scenarios/<name>.expect.json`).
struct Scenario: CustomStringConvertible, Sendable {
    let name: String
    let rule: String
    let activity: String
    let events: [PositionedEvent]
    let checks: [JSONValue]

    var description: String { name }

    static let directory: URL = Bundle.module.url(forResource: "Scenarios", withExtension: nil)!

    static func load(_ name: String) throws -> Scenario {
        let lines = try String(contentsOf: directory.appendingPathComponent("\(name).jsonl"), encoding: .utf8)
        var events: [PositionedEvent] = []
        for (number, line) in lines.split(separator: "\n").enumerated() {
            let value = try JSONParser.parse(String(line))
            let position = value["position"]?.numberValue?.int64Value ?? Int64(number + 1)
            events.append(PositionedEvent(position: position, event: try EventCodec.decode(value)))
        }
        let expect = try JSONParser.parse(
            try Data(contentsOf: directory.appendingPathComponent("\(name).expect.json")))
        return Scenario(
            name: name, rule: expect["rule"]?.stringValue ?? "", activity: expect["activity"]?.stringValue ?? "A",
            events: events, checks: expect["checks"]?.arrayValue ?? [])
    }

    static var names: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".jsonl") }.map { String($0.dropLast(6)) }.sorted()
    }

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(relativePath))
    }

    static func files(in folder: String) -> [String] {
        let path = directory.appendingPathComponent(folder).path
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(folder)/\($0)" }
    }
}

/// A deterministic generator for property tests (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
