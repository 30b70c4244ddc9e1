import ActivityModel
internal import Foundation
import Ledger
import LedgerStore
internal import OpenAPIRuntime

extension LedgerAPI {
    func planResync(_ input: Operations.planResync.Input) async throws -> Operations.planResync.Output {
        guard case .json(let snapshot) = input.body else { throw APIError.badRequest("expected application/json") }
        try Self.checkTime(snapshot.at, field: "at")
        // The snapshot's own parser reads the document (its field rules and messages are the CLI's too).
        let parsed = try DeviceSnapshot(json: Self.interchange(snapshot))
        let plan = try await ledger.resync(snapshot: parsed, app: Caller.app())
        return .ok(.init(body: .json(.rendered(plan.json))))
    }

    func startReconciliation(_ input: Operations.startReconciliation.Input) async throws
        -> Operations.startReconciliation.Output
    {
        let run = input.query.run
        guard !run.isEmpty, run.count <= 200 else { throw APIError.invalidParameter("run", "must be 1…200 characters") }
        let at = try TimeParameter.parse(input.query.at, name: "at") ?? Ledger.now()
        let body: HTTPBody
        switch input.body {
        case .application_x_hyphen_ndjson(let value): body = value
        }
        // The body limit middleware has already bounded the size.
        let truth = try await [UInt8](collecting: body, upTo: configuration.maxBodyBytes)
        guard !truth.isEmpty else {
            // On the wire a missing body and an empty one are the same (`Content-Length: 0`); the schema wants one.
            throw APIError.badRequest("the truth feed (JSON Lines) body is required and must not be empty", field: "body")
        }
        let report = try await ledger.nightly(truthBytes: truth, runID: run, at: at, app: Caller.app())
        return .ok(.init(body: .json(.rendered(bytes: report.compactBytes))))
    }

    func getReconciliation(_ input: Operations.getReconciliation.Input) async throws
        -> Operations.getReconciliation.Output
    {
        guard let report = try await ledger.nightlyReport(run: input.path.run, app: Caller.app()) else {
            // Escaped and cut: the path's run id is the client's text (found: a raw U+007F in the one-line reason).
            let run = LogText.escaped(String(input.path.run.prefix(200)))
            throw APIError(LedgerError(.notFound, "no reconciliation run \"\(run)\"", field: "run"))
        }
        return .ok(.init(body: .json(.rendered(bytes: report.compactBytes))))
    }

    func verifyLedger(_ input: Operations.verifyLedger.Input) async throws -> Operations.verifyLedger.Output {
        _ = try Caller.app()
        var expected: Digest?
        if let digest = input.query.digest {
            guard let parsed = Digest(digest) else {
                throw APIError.invalidParameter(
                    "digest", "'\(LogText.escaped(String(digest.prefix(100))))' is not POSITION:HEX (64 hex digits)")
            }
            expected = parsed
        }
        let report = try await ledger.verify(upTo: expected)
        return .ok(.init(body: .json(.rendered(report.json))))
    }

    func getDigest(_ input: Operations.getDigest.Input) async throws -> Operations.getDigest.Output {
        _ = try Caller.app()
        return .ok(.init(body: .json(.rendered(try await ledger.digest().json))))
    }
}
