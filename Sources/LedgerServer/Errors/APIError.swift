internal import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// An error response: `{"error":{"code":…,"message":…,"field":…}}` with its status.
///
/// Every failure reaches the client in this one shape; ``APIErrorMiddleware`` converts whatever was thrown.
struct APIError: Error, Sendable, HTTPResponseError {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var field: String?
    var stream: String?
    var expectedVersion: Int64?
    var actualVersion: Int64?
    /// Seconds after which a refused request may be retried (`Retry-After`), for 503.
    var retryAfter: Int?
    /// The `Allow` header of a 405.
    var allow: String?

    init(status: HTTPResponse.Status, code: String, message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    static func badRequest(_ message: String, field: String? = nil) -> Self {
        Self(status: .badRequest, code: "badRequest", message: message, field: field)
    }

    static func invalidParameter(_ name: String, _ message: String) -> Self {
        Self(status: .badRequest, code: "invalidParameter", message: "parameter '\(name)': \(message)", field: name)
    }

    static func unauthorized(_ message: String) -> Self {
        Self(status: .unauthorized, code: "unauthorized", message: message)
    }

    static func forbidden(_ message: String) -> Self {
        Self(status: .forbidden, code: "forbidden", message: message)
    }

    static func tooLarge(limit: Int) -> Self {
        Self(
            status: .contentTooLarge, code: "payloadTooLarge",
            message: "request body is over the limit of \(limit) bytes"
        )
    }

    var headers: HTTPFields {
        var fields: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfter { fields[.retryAfter] = String(retryAfter) }
        if let allow { fields[.allow] = allow }
        return fields
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body())))
    }

    /// The encoded error document.
    func body() -> Data {
        struct Document: Encodable {
            struct Inner: Encodable {
                var code: String
                var message: String
                var field: String?
                var stream: String?
                var expectedVersion: Int64?
                var actualVersion: Int64?
            }
            var error: Inner
        }
        let document = Document(
            error: .init(
                code: code, message: message, field: field, stream: stream,
                expectedVersion: expectedVersion, actualVersion: actualVersion
            )
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)) ?? Data(#"{"error":{"code":"internal","message":"?"}}"#.utf8)
    }
}

extension APIError {
    /// The response for a ledger refusal.
    init(_ error: LedgerBackendError) {
        // Codes are those `Schemas/openapi.yaml` lists for `Error.code`, not the backend's own names.
        let status: HTTPResponse.Status
        let code: String
        switch error.code {
        case .badInput: (status, code) = (.badRequest, "badRequest")
        case .malformedJSON: (status, code) = (.badRequest, "malformedJSON")
        case .invalidEvent: (status, code) = (.unprocessableContent, "invalidEvent")
        case .notFound: (status, code) = (.notFound, "notFound")
        case .conflict: (status, code) = (.conflict, "conflict")
        case .unavailable: (status, code) = (.serviceUnavailable, "unavailable")
        default: (status, code) = (.internalServerError, "internal")
        }
        self.init(status: status, code: code, message: error.message, field: error.field)
        stream = error.stream
        expectedVersion = error.expectedVersion
        actualVersion = error.actualVersion
        // Unavailable is a storage refusal (the file busy past the busy timeout, the store shutting down):
        // nothing was written, and the same request may succeed a moment later.
        if error.code == .unavailable { retryAfter = 1 }
    }
}
