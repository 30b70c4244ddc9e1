import Hummingbird
import NIOCore

/// Refuses bodies over the limit with 413 before anything parses them, whether or not the client sent a
/// `Content-Length`; the collected body is handed on as one buffer.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes {
            throw APIError.tooLarge(limit: maxBytes)
        }
        var request = request
        do {
            _ = try await request.collectBody(upTo: maxBytes)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge(limit: maxBytes)
        }
        return try await next(request, context)
    }
}
