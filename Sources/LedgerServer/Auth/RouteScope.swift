import HTTPTypes
import Ledger

/// Which scope each operation needs (mirrors `x-scope` in Schemas/openapi.yaml).
enum RouteScope {
    /// nil: the route needs no key (`/health`, `/metrics`, and anything outside `/v1/`).
    static func required(method: HTTPRequest.Method, path: String) -> APIScope? {
        guard path.hasPrefix("/v1/") else { return nil }
        if path.hasPrefix("/v1/reconciliations") || path == "/v1/verify" || path == "/v1/digest" {
            return .admin
        }
        if method == .post { return .ingest }
        return .read
    }
}
