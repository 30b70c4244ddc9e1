import ActivityModel
internal import Foundation
import Ledger
import Logging
import Synchronization
internal import OpenAPIRuntime

/// The handlers of `Schemas/openapi.yaml`: parse, call the ``Ledger`` in the caller's app, render the typed
/// answer once (``RenderedDocument``). Authentication, body limits and error rendering are middleware; a
/// ``LedgerError`` becomes its HTTP status in one place, ``APIError/init(_:)``.
struct LedgerAPI: APIProtocol {
    let ledger: Ledger
    let configuration: LedgerServerConfiguration
    let metrics: ServerMetrics
    let logger: Logger
    /// Feed requests waiting for an append now (`LedgerServerConfiguration.maxWaitingFeeds`).
    let waitingFeeds = WaitingFeeds()

    func getHealth(_ input: Operations.getHealth.Input) async throws -> Operations.getHealth.Output {
        let position = try await ledger.lastPosition()
        return .ok(.init(body: .json(.rendered(["status": "ok", "lastPosition": .int(position)]))))
    }

    func getMetrics(_ input: Operations.getMetrics.Input) async throws -> Operations.getMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(metrics.exposition()))))
    }

    /// The validated `limit` parameter.
    static func limit(_ value: Int?, default defaultValue: Int, max: Int) throws -> Int {
        guard let value else { return defaultValue }
        guard (1...max).contains(value) else {
            throw APIError.invalidParameter("limit", "must be between 1 and \(max), got \(value)")
        }
        return value
    }
}

/// A count of waiting feed requests, shared by every copy of the handlers.
final class WaitingFeeds: Sendable {
    private let count = Atomic(0)

    /// Takes a place if fewer than `limit` are taken.
    func enter(limit: Int) -> Bool {
        if count.add(1, ordering: .relaxed).newValue <= limit { return true }
        count.subtract(1, ordering: .relaxed)
        return false
    }

    func leave() { count.subtract(1, ordering: .relaxed) }
}
