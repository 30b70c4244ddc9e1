import ActivityModel
import HTTPTypes
import Hummingbird
import Ledger
import NIOCore

/// Serves `POST /v1/events` and `POST /v1/batches` from the raw body: the ledger's JSON parser reads it
/// once and the parsed events go to the backend as they are, skipping the generated `JSONDecoder` pass and
/// the `JSONEncoder` pass that turned each `Components.Schemas.Event` back into bytes (together ~45 % of
/// the server's CPU under append load).
///
/// Why a middleware, innermost, rather than a route or a change to the generated handler: it sits behind
/// the same metrics, error, API-key and body-limit middleware as the generated route, so auth, scope, the
/// limit, status counting and error rendering are the very same code; and anything that is not plainly
/// valid (see ``RawAppendBody``) — wrong content type, an `Accept` the generated serializer might refuse,
/// unusual query, malformed or schema-violating JSON — is handed unchanged to the generated handler, which
/// answers exactly as it always did. The OpenAPI document stays the contract; this is only a faster way
/// to serve its happy path and its ledger-level refusals (409, 422).
///
/// It also refuses, whichever way the request is then served, a body that gives a key twice in one object or a
/// number a double cannot hold (RFC 7493): the generated decoder keeps one of the two values, the ledger's reader
/// another, a client a third. And when the generated handler serves the request, this parse of the body is what it
/// appends (`RawAppendBody.sentDocument`), so an event is stored as sent whichever way it went. With `serveRaw`
/// false (`rawAppends` off) those two are all it does.
struct RawAppendMiddleware<Context: RequestContext>: RouterMiddleware {
    let api: LedgerAPI
    let maxBodyBytes: Int
    var serveRaw = true

    private enum Route {
        /// `POST /v1/apns` is always served by the generated handler, with the body as parsed here.
        case event, batch, apns
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        // Every answer of a write is JSON. The generated layer refuses any other `Accept` only once the handler has
        // run, so a 406 had already appended its events (found by a probe: a client retrying it wrote them twice).
        if request.method == .post || request.method == .put, let accept = request.headers[.accept],
            !Self.acceptsJSON(accept)
        {
            throw APIError(
                status: .notAcceptable, code: "http406",
                message: "Response content type not acceptable: this answer is application/json (Accept: \(accept))",
                field: "Accept")
        }
        guard request.method == .post, let route = Self.route(request.uri.path), Self.isJSONBody(request.headers)
        else {
            // Every other JSON body goes to the generated decoder: bounded first (`DecoderWork`).
            var request = request
            if request.method == .post || request.method == .put, Self.isJSONBody(request.headers) {
                guard DecoderWork.withinLimit(try await request.collectBody(upTo: maxBodyBytes)) else {
                    throw DecoderWork.refusal
                }
            }
            return try await next(request, context)
        }
        var request = request
        // BodyLimitMiddleware has collected the body already: this is the same buffer, parsed once here.
        let body = try await request.collectBody(upTo: maxBodyBytes)
        let document: ActivityModel.JSONValue
        switch RawAppendBody.parsed(body) {
        case .success(let value): document = value
        case .failure(let error):
            // Where and why, rather than the generated decoder's "The given data was not valid JSON."
            throw APIError.malformedJSON(error)
        }
        let parsed: RawAppendBody?
        switch route {
        case _ where !serveRaw || !Self.isPlainJSON(request.headers): parsed = nil
        case .event:
            parsed = RawAppendBody.expectedVersion(query: request.uri.query).flatMap {
                RawAppendBody.single(document, expectedVersion: $0)
            }
        case .batch:
            parsed = (request.uri.query ?? "").isEmpty ? RawAppendBody.batch(document) : nil
        case .apns:
            parsed = nil
        }
        guard let parsed else {
            // The generated decoder would keep one of a key's two values, and words a number it cannot hold as an
            // unreadable value: refused here, naming it as the CLI does (RFC 7493). A plain body has neither (a
            // key twice or an exponent goes this way), and the ledger's decoder checks each event again.
            if let problem = document.firstInterchangeProblem() {
                throw APIError.badRequest(
                    "field '\(problem.field)': expected \(problem.expected), got \(problem.found)", field: problem.field)
            }
            if route == .batch, let (field, message) = RawAppendBody.expectedVersionsProblem(document) {
                throw APIError.badRequest(message, field: field)
            }
            if route == .apns, let (field, message) = RawAppendBody.apnsIntegerProblem(document) {
                throw APIError.badRequest(message, field: field)
            }
            if route == .batch, let count = RawAppendBody.eventCount(document), count > LedgerAPI.maxBatchEvents {
                // The schema's `maxItems`, as the generated decoder words it, before the bound on its work.
                throw APIError.badRequest(
                    "field 'events' has \(count) items; at most \(LedgerAPI.maxBatchEvents) are allowed", field: "events")
            }
            guard DecoderWork.withinLimit(body) else { throw DecoderWork.refusal }
            // The generated handler validates and answers; what it appends is this document, as sent.
            return try await RawAppendBody.$sentDocument.withValue(document) { try await next(request, context) }
        }
        let outcomes = try await api.append(parsed, singleEvent: route == .event)
        let answer = route == .event ? outcomes[0].json : AppendOutcome.batchJSON(outcomes)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.compactBytes))
        )
    }

    private static func route(_ path: String) -> Route? {
        switch path {
        case "/v1/events": .event
        case "/v1/batches": .batch
        case "/v1/apns": .apns
        default: nil
        }
    }

    /// Whether an `Accept` header takes `application/json`: a media range of `application/json`, `application/*` or
    /// `*/*` (parameters allowed) whose `q` is not 0.
    static func acceptsJSON(_ accept: String) -> Bool {
        accept.split(separator: ",").contains { range in
            let parts = range.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
            guard let type = parts.first, ["application/json", "application/*", "*/*"].contains(type) else {
                return false
            }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return (q ?? 1) > 0
        }
    }

    /// A body the generated layer decodes as JSON (any `application/json` or `+json` type, or none given).
    private static func isJSONBody(_ headers: HTTPFields) -> Bool {
        guard let contentType = headers[.contentType]?.lowercased() else { return true }
        let type = (contentType.split(separator: ";").first ?? "").filter { $0 != " " && $0 != "\t" }
        return type == "application/json" || type.hasSuffix("+json")
    }

    /// A JSON request whose response the generated serializer would send as JSON: no unusual
    /// `Content-Type` (it chooses `application/json` when there is none) and no `Accept` it could refuse.
    private static func isPlainJSON(_ headers: HTTPFields) -> Bool {
        if let contentType = headers[.contentType] {
            switch contentType.lowercased() {
            case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8": break
            default: return false
            }
        }
        if let accept = headers[.accept] {
            switch accept.lowercased() {
            case "*/*", "application/json", "application/*": break
            default: return false
            }
        }
        return true
    }
}
