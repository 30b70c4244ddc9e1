internal import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import Logging

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
        guard let key = try keys.authenticate(secret) else {
            throw APIError.unauthorized("unknown or revoked API key")
        }
        guard key.allows(scope) else {
            throw APIError.forbidden(
                "API key \(key.id) lacks scope '\(scope.rawValue)' (has \(key.scopes.sorted().map(\.rawValue).joined(separator: ",")))"
            )
        }
        // The logs name the app and key through `Caller.metadataProvider`.
        return try await Caller.$key.withValue(key) {
            try await Caller.$recheck.withValue({ [keys] in try keys.authenticate(secret)?.allows(scope) == true }) {
                try await next(request, context)
            }
        }
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
