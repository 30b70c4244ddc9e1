internal import Foundation
import HTTPTypes
import Ledger
import Hummingbird
import Logging
import NIOHTTP1
internal import OpenAPIRuntime

/// Outermost middleware: turns anything thrown into the JSON error shape, so bad input never becomes a
/// bare 500, and logs server faults.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let apiError = Self.queryParameterError(for: error, query: request.uri.query) ?? Self.apiError(for: error)
            if apiError.status.kind == .serverError {
                // Only the cause: ServerError's own description repeats the request, key and body included.
                var metadata: Logger.Metadata = ["http.path": .string(request.uri.path)]
                if let serverError = error as? ServerError {
                    metadata["openapi.operation"] = .string(serverError.operationID)
                    metadata["error.description"] = .string(String(describing: serverError.underlyingError))
                } else {
                    metadata["error.description"] = .string(String(describing: error))
                }
                context.logger.error("request failed", metadata: metadata)
            }
            return try apiError.response(from: request, context: context)
        }
    }

    /// The client-facing error for `error`, unwrapping the OpenAPI runtime's `ServerError`.
    static func apiError(for error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as LedgerError:
            return APIError(error)
        case let error as DecodingError:
            return decodingError(error)
        case let error as HTTPParserError:
            return MalformedRequestHandler.error(error)
        case let error as ServerError:
            if !(error.underlyingError is ServerError) {
                let inner = apiError(for: error.underlyingError)
                if inner.code != "internal" { return inner }
            }
            let status = error.httpStatus
            if status.kind == .serverError && error.operationInput == nil {
                // The request never reached a handler: the runtime could not parse it.
                return .badRequest(error.causeDescription)
            }
            if status.kind == .clientError {
                return APIError(
                    status: status, code: code(for: status), message: error.causeDescription, field: field(for: status))
            }
            return internalError()
        case let error as any HTTPResponseError:
            let status = error.status
            if status.code == 413 {
                return APIError(
                    status: status, code: "payloadTooLarge", message: "request body too large", field: "body")
            }
            return APIError(
                status: status, code: code(for: status), message: status.reasonPhrase, field: field(for: status))
        default:
            return internalError()
        }
    }

    private static func internalError() -> APIError {
        APIError(status: .internalServerError, code: "internal", message: "internal error; see the server log")
    }

    /// What a status refuses when the framework, not a handler, refused the request: the body (413) or its
    /// `Content-Type` (415); nil for the others.
    private static func field(for status: HTTPResponse.Status) -> String? {
        switch status.code {
        case 413: "body"
        case 415: "Content-Type"
        default: nil
        }
    }

    private static func code(for status: HTTPResponse.Status) -> String {
        switch status.code {
        case 400: "badRequest"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "notFound"
        case 405: "methodNotAllowed"
        case 409: "conflict"
        case 413: "payloadTooLarge"
        case 415: "unsupportedMediaType"
        case 422: "invalidEvent"
        default: "http\(status.code)"
        }
    }

    /// A decoder's type in the terms of the JSON the client sent.
    static func clientTypeName(_ type: Any.Type) -> String {
        if type == String.self { return "a string" }
        if type == Bool.self { return "a boolean" }
        if type == Int.self || type == Int64.self || type == Int32.self { return "an integer" }
        if type == Double.self || type == Float.self { return "a number" }
        if type == Components.Schemas.Time.self { return "an RFC 3339 time string or a number of Unix seconds" }
        let name = String(describing: type)
        if name.hasPrefix("Array") || name.hasPrefix("[") { return "an array" }
        return "an object"
    }

    /// Names the field at fault, e.g. `events[2].type`.
    static func decodingError(_ error: DecodingError) -> APIError {
        func path(_ codingPath: [any CodingKey]) -> String {
            var result = ""
            for key in codingPath {
                if let index = key.intValue {
                    result += "[\(index)]"
                } else {
                    result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return result
        }
        /// A field at fault, or the whole body (a body of `null`, `[]` or `"x"` was named `field ''`).
        func named(_ field: String, _ problem: String) -> APIError {
            field.isEmpty ? .badRequest("the request body \(problem)") : .badRequest("field '\(field)' \(problem)", field: field)
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return .badRequest("missing required field '\(field)'", field: field)
        case .typeMismatch(let type, let context):
            return named(path(context.codingPath), "has the wrong type (expected \(clientTypeName(type)))")
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            if context.debugDescription.contains("oneOf") || context.debugDescription.contains("anyOf") {
                // The generated decoder's "no child schema decoded": a wrong type, null or not.
                return named(field, "has the wrong type (expected \(clientTypeName(type)))")
            }
            return named(field, "must not be null")
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            if field.isEmpty {
                // The body's (a query parameter's is named by `queryParameterError` before this is asked).
                var error = APIError.badRequest("malformed JSON: \(context.debugDescription)", field: "body")
                error.code = "malformedJSON"
                return error
            }
            if let unknown = unknownEnumValue(context.debugDescription) {
                return .badRequest("field '\(field)': \(unknown)", field: field)
            }
            if context.debugDescription.contains("OpenAPIValueContainer") {
                // The runtime's name for "any JSON": a value the decoder cannot hold. That is a number out of
                // range (1e999) or text that is not Unicode (invalid UTF-8, a lone surrogate): found worded as a
                // number for a NUL byte in a string. Foundation's description does not tell the two apart.
                return .badRequest(
                    "field '\(field)' holds a value that cannot be read: a number out of range, or text that is not "
                        + "valid Unicode (invalid UTF-8, a lone surrogate)", field: field)
            }
            return .badRequest("field '\(field)': \(context.debugDescription)", field: field)
        @unknown default:
            return .badRequest("invalid request body")
        }
    }
}
