import Ledger

/// The authenticated API key of the request being handled.
///
/// Set by ``APIKeyMiddleware`` as a task local around the route, because the generated OpenAPI handlers
/// receive only their typed input.
enum Caller {
    @TaskLocal static var key: APIKey?

    /// The app of the current key; the middleware guarantees one on every `/v1/` route.
    static func app() throws -> String {
        guard let key else { throw APIError.unauthorized("missing API key") }
        return key.app
    }
}
