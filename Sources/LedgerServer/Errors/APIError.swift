import ActivityModel
import HTTPTypes
import Ledger
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
    /// What this response reports (a ``LedgerError``, a decoding error…), for the server log.
    var cause: (any Error)?

    init(status: HTTPResponse.Status, code: String, message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    static func badRequest(_ message: String, field: String? = nil) -> Self {
        Self(status: .badRequest, code: "badRequest", message: message, field: field)
    }

    /// A body that is not JSON, with where and why (`JSONParseError`: "… at byte N").
    static func malformedJSON(_ problem: JSONParseError) -> Self {
        Self(status: .badRequest, code: "malformedJSON", message: "malformed JSON: \(problem)", field: "body")
    }

    static func invalidParameter(_ name: String, _ message: String) -> Self {
        Self(status: .badRequest, code: "invalidParameter", message: "parameter '\(name)': \(message)", field: name)
    }

    /// The request's API key (`Authorization` or `X-API-Key`) is missing, unknown or revoked.
    static func unauthorized(_ message: String) -> Self {
        Self(status: .unauthorized, code: "unauthorized", message: message, field: "Authorization")
    }

    /// The request's API key lacks the route's scope.
    static func forbidden(_ message: String) -> Self {
        Self(status: .forbidden, code: "forbidden", message: message, field: "Authorization")
    }

    static func tooLarge(limit: Int) -> Self {
        Self(
            status: .contentTooLarge, code: "payloadTooLarge",
            message: "request body is over the limit of \(limit) bytes", field: "body"
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

    /// The error document, written by ActivityModel's `JSONWriter` like every other answer.
    func body() -> [UInt8] {
        var inner = JSONObject(["code": .string(code), "message": .string(message)])
        if let field { inner["field"] = .string(field) }
        if let stream { inner["stream"] = .string(stream) }
        if let expectedVersion { inner["expectedVersion"] = .int(expectedVersion) }
        if let actualVersion { inner["actualVersion"] = .int(actualVersion) }
        return JSONValue.object(JSONObject(["error": .object(inner)])).compactBytes
    }
}

extension APIError {
    /// The response for a ledger refusal: the one place a ``LedgerError`` code becomes an HTTP status. Codes are
    /// those `Schemas/openapi.yaml` lists for `Error.code`.
    init(_ error: LedgerError) {
        let status: HTTPResponse.Status
        let code: String
        switch error.code {
        case .badInput: (status, code) = (.unprocessableContent, "invalidEvent")
        case .notFound: (status, code) = (.notFound, "notFound")
        case .conflict: (status, code) = (.conflict, "conflict")
        case .forbidden: (status, code) = (.forbidden, "forbidden")
        default: (status, code) = (.serviceUnavailable, "unavailable")
        }
        // A storage failure's own words name the file's path or the database's user, host and port (found by a
        // probe: a PostgreSQL error in a 503 body); the client gets what it can act on, the server log the cause.
        let message =
            status == .serviceUnavailable
            ? "the ledger's storage is busy or unavailable; nothing was written; try again" : error.message
        self.init(status: status, code: code, message: message, field: error.field)
        stream = error.stream
        expectedVersion = error.expectedVersion
        actualVersion = error.actualVersion
        cause = error
        // Storage refusals (the file busy past the busy timeout, the store shutting down): nothing was written,
        // and the same request may succeed a moment later.
        if status == .serviceUnavailable { retryAfter = 1 }
    }
}
