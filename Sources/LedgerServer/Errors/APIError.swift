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

    var headers: HTTPFields { [.contentType: "application/json; charset=utf-8"] }

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
        let status: HTTPResponse.Status
        switch error.code {
        case .badInput: status = .badRequest
        case .invalidEvent: status = .unprocessableContent
        case .notFound: status = .notFound
        case .conflict: status = .conflict
        case .unavailable: status = .serviceUnavailable
        default: status = .internalServerError
        }
        self.init(status: status, code: error.code.description, message: error.message, field: error.field)
        stream = error.stream
        expectedVersion = error.expectedVersion
        actualVersion = error.actualVersion
    }
}
