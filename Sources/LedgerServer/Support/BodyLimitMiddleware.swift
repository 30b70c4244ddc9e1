import ActivityModel
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
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: maxBytes)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge(limit: maxBytes)
        }
        do {
            return try await next(request, context)
        } catch {
            // The generated decoder words every body that is not JSON "The given data was not valid JSON." (a
            // resync snapshot): where and why come from the ledger's parser, run on the body only then.
            // Only for a body sent: a query parameter the generated decoder could not read is worded "malformed
            // JSON" too, and named by `APIErrorMiddleware` from the query.
            if body.readableBytes > 0,
                APIErrorMiddleware<Context>.queryParameterError(for: error, query: request.uri.query) == nil,
                APIErrorMiddleware<Context>.apiError(for: error).code == "malformedJSON",
                case .failure(let problem) = RawAppendBody.parsed(body)
            {
                throw APIError.malformedJSON(problem)
            }
            throw error
        }
    }
}
