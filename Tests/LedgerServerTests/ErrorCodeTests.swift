import Foundation
import HTTPTypes
@testable import LedgerServer
import Ledger
import Testing

/// Every refusal the ledger can make reaches clients with a code that `Schemas/openapi.yaml` documents for
/// `Error.code` (the backend's own code names, e.g. `badInput`, used to leak through).
@Suite("Error codes")
struct ErrorCodeTests {
    /// The codes listed in the OpenAPI document's `Error.code` description.
    static func documentedCodes() throws -> Set<String> {
        let spec = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Schemas/openapi.yaml").standardized
        let text = try String(contentsOf: spec, encoding: .utf8)
        let marker = try #require(text.range(of: "description: \"badRequest,"), "Error.code description not found")
        let line = text[marker.lowerBound...].prefix { $0 != "\n" }
        let list = line.drop { $0 != "\"" }.dropFirst().prefix { $0 != "\"" }
        return Set(list.split(separator: ",").map { String($0.trimmingCharacters(in: .whitespaces).prefix { $0.isLetter }) })
    }

    @Test("each ledger refusal maps to a documented code and the status that goes with it")
    func ledgerCodesAreDocumented() throws {
        let documented = try Self.documentedCodes()
        let cases: [(LedgerError, Int, String)] = [
            (LedgerError(.badInput, "bad", field: "events[0].data"), 422, "invalidEvent"),
            (LedgerError(.notFound, "no such activity R"), 404, "notFound"),
            (LedgerError(.conflict, "stream activity:R is at version 2, expected 1"), 409, "conflict"),
            (LedgerError(.forbidden, "not yours"), 403, "forbidden"),
            (LedgerError(.storage, "shutting down"), 503, "unavailable"),
        ]
        for (error, status, code) in cases {
            let api = APIError(error)
            #expect(api.status.code == status, "\(error)")
            #expect(api.code == code, "\(error)")
            #expect(documented.contains(api.code), "\(api.code) is not in openapi.yaml's Error.code list \(documented.sorted())")
        }
    }
}
