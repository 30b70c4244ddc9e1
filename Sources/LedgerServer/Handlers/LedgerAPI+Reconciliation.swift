internal import Foundation
internal import OpenAPIRuntime

extension LedgerAPI {
    func planResync(_ input: Operations.planResync.Input) async throws -> Operations.planResync.Output {
        guard case .json(let snapshot) = input.body else { throw APIError.badRequest("expected application/json") }
        try Self.checkTime(snapshot.at, field: "at")
        let json = try await backend.resyncJSON(app: Caller.app(), snapshot: Self.encode(snapshot))
        return .ok(.init(body: .json(try Self.document(json))))
    }

    func startReconciliation(_ input: Operations.startReconciliation.Input) async throws
        -> Operations.startReconciliation.Output
    {
        let run = input.query.run
        guard !run.isEmpty, run.count <= 200 else { throw APIError.invalidParameter("run", "must be 1…200 characters") }
        let at = try TimeParameter.parse(input.query.at, name: "at")
        let body: HTTPBody
        switch input.body {
        case .application_x_hyphen_ndjson(let value): body = value
        }
        // The body limit middleware has already bounded the size.
        let truth = try await Data(collecting: body, upTo: configuration.maxBodyBytes)
        guard !truth.isEmpty else {
            // On the wire a missing body and an empty one are the same (`Content-Length: 0`); the schema wants one.
            throw APIError.badRequest("the truth feed (JSON Lines) body is required and must not be empty", field: "body")
        }
        let json = try await backend.startReconciliationJSON(app: Caller.app(), run: run, truth: truth, at: at)
        return .ok(.init(body: .json(try Self.document(json))))
    }

    func getReconciliation(_ input: Operations.getReconciliation.Input) async throws
        -> Operations.getReconciliation.Output
    {
        let json = try await backend.reconciliationJSON(app: Caller.app(), run: input.path.run)
        return .ok(.init(body: .json(try Self.document(json))))
    }

    func verifyLedger(_ input: Operations.verifyLedger.Input) async throws -> Operations.verifyLedger.Output {
        let app = try Caller.app()
        let json: Data
        if let digest = input.query.digest {
            guard Self.isDigest(digest) else {
                throw APIError.invalidParameter(
                    "digest", "'\(LogText.escaped(String(digest.prefix(100))))' is not POSITION:HEX (64 hex digits)")
            }
            json = try await backend.verifyJSON(app: app, digest: digest)
        } else {
            json = try await backend.verifyJSON(app: app)
        }
        return .ok(.init(body: .json(try Self.document(json))))
    }

    /// `^[0-9]{1,18}:[0-9a-fA-F]{64}$`, the `digest` parameter's pattern in Schemas/openapi.yaml.
    static func isDigest(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2, (1...18).contains(parts[0].count), parts[1].count == 64 else { return false }
        return parts[0].allSatisfy { (0x30...0x39).contains($0) }
            && parts[1].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    func getDigest(_ input: Operations.getDigest.Input) async throws -> Operations.getDigest.Output {
        let json = try await backend.digestJSON(app: Caller.app())
        return .ok(.init(body: .json(try Self.document(json))))
    }
}
