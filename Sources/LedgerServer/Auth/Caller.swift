import Ledger
import Logging

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

extension Caller {
    /// Adds the caller's app and key id to every log line written while a request is handled. Read only when a
    /// line is written: setting a logger's metadata per request made swift-log's stream handler re-render it
    /// each time (~5 % of a single append's CPU).
    static let metadataProvider = Logger.MetadataProvider {
        guard let key else { return [:] }
        return ["ledger.app": .string(key.app), "ledger.key": .string(key.id)]
    }
}
