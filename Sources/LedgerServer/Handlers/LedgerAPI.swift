internal import Foundation
import Logging
internal import OpenAPIRuntime

/// The handlers of `Schemas/openapi.yaml`: decode, call the ``LedgerBackend`` with the caller's app,
/// encode. Authentication, body limits and error rendering are middleware.
struct LedgerAPI: APIProtocol {
    let backend: any LedgerBackend
    let configuration: LedgerServerConfiguration
    let metrics: ServerMetrics
    let appendSignal: AppendSignal
    let logger: Logger

    func getHealth(_ input: Operations.getHealth.Input) async throws -> Operations.getHealth.Output {
        let position = try await backend.lastPosition()
        return .ok(.init(body: .json(.init(status: .ok, lastPosition: position))))
    }

    func getMetrics(_ input: Operations.getMetrics.Input) async throws -> Operations.getMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(metrics.exposition()))))
    }

    /// Decodes a backend's JSON output for the response.
    static func document(_ data: Data) throws -> JSONValue {
        try JSONValue(json: data)
    }

    /// Compact JSON of a decoded request document, in the interchange format the backend reads.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
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
