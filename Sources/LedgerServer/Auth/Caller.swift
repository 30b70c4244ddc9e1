import Ledger
import Logging

/// The authenticated API key of the request being handled.
///
/// Set by ``APIKeyMiddleware`` as a task local around the route, because the generated OpenAPI handlers
/// receive only their typed input.
enum Caller {
    /// The request's key, and how to ask again whether it still holds.
    struct Credentials: Sendable {
        var key: APIKey
        /// Asks again, through the key cache (so within its TTL of a revocation), whether the key still holds the
        /// route's scope. A member of this struct, not a task local of its own: a task local of function type
        /// crashed the release build in `swift_task_localValuePush`.
        var recheck: (@Sendable () async throws -> Bool)?
    }

    @TaskLocal static var credentials: Credentials?

    static var key: APIKey? { credentials?.key }

    /// Throws 401 when the caller's key was revoked since the request began: a request that waits (a feed
    /// long-poll) must not hand out what was appended after its key stopped working (found by a probe: a poll
    /// opened before `keys revoke` returned events appended 4 s after it).
    static func checkStillAuthorized() async throws {
        guard let recheck = credentials?.recheck, try await recheck() else {
            throw APIError.unauthorized("unknown or revoked API key")
        }
    }

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
