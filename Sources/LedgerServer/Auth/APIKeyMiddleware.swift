internal import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import Logging
import NIOPosix

/// Authenticates `Authorization: Bearer al_…` (or `X-API-Key`) and checks the route's scope before the
/// body is read: missing or unknown key → 401, wrong scope → 403.
struct APIKeyMiddleware<Context: RequestContext>: RouterMiddleware {
    let keys: APIKeyCache

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let scope = RouteScope.required(method: request.method, path: request.uri.path) else {
            return try await next(request, context)
        }
        guard let secret = Self.secret(of: request) else {
            throw APIError.unauthorized("missing API key: send 'Authorization: Bearer al_…'")
        }
        guard let key = try await Self.authenticate(secret, keys: keys) else {
            throw APIError.unauthorized("unknown or revoked API key")
        }
        guard key.allows(scope) else {
            throw APIError.forbidden(
                "API key \(key.id) lacks scope '\(scope.rawValue)' (has \(key.scopes.sorted().map(\.rawValue).joined(separator: ",")))"
            )
        }
        // The logs name the app and key through `Caller.metadataProvider`.
        let credentials = Caller.Credentials(key: key) { [keys] in
            try await Self.authenticate(secret, keys: keys)?.allows(scope) == true
        }
        return try await Caller.$credentials.withValue(credentials) {
            try await next(request, context)
        }
    }

    /// The key of `secret`: from the cache, else read on NIO's thread pool. The read blocks its thread (a SQLite
    /// read, or one PostgreSQL round trip on the key store's own connection), and on the cooperative pool two
    /// stuck reads froze the whole server — `/health` and SIGTERM included — when PostgreSQL dropped the
    /// connection under them (found by a probe: a database restart hung `serve` for good).
    static func authenticate(_ secret: String, keys: APIKeyCache) async throws -> APIKey? {
        if let key = keys.cached(secret) { return key }
        return try await NIOThreadPool.singleton.runIfActive { try keys.authenticate(secret) }
    }

    private static func secret(of request: Request) -> String? {
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                // Spaces and tabs around the key (Foundation's trimmingCharacters cost 2 % of a single append).
                var key = parts[1].drop { $0 == " " || $0 == "\t" }
                while let last = key.last, last == " " || last == "\t" { key = key.dropLast() }
                return String(key)
            }
            return nil
        }
        if let name = HTTPField.Name("X-API-Key"), let value = request.headers[name] {
            return value
        }
        return nil
    }
}
