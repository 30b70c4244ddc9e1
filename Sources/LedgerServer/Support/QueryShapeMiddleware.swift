internal import Foundation
import Hummingbird

/// Every query parameter of the API is one value. The generated decoders took the first of a repeated one
/// (`?expectedVersion=0&expectedVersion=5` appended with 200 as if only 0 were sent), so a request that gives a
/// parameter twice is refused, 400 naming it, before anything runs.
struct RepeatedQueryMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        if let query = request.uri.query, query.contains("&"), let repeated = Self.repeatedName(in: query) {
            throw APIError.invalidParameter(repeated, "given more than once; send it once")
        }
        return try await next(request, context)
    }

    /// The first parameter name `query` gives twice (names compared after percent-decoding), if any.
    static func repeatedName(in query: String) -> String? {
        var seen = Set<[UInt8]>()
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            let raw = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let name = String(raw).replacingOccurrences(of: "+", with: " ")
            let decoded = name.removingPercentEncoding ?? name
            if !seen.insert(Array(decoded.utf8)).inserted { return decoded }
        }
        return nil
    }
}
