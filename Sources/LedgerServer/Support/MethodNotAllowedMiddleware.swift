import HTTPTypes
import Hummingbird
internal import OpenAPIRuntime
import Synchronization

/// The operations Schemas/openapi.yaml declares, as the generated code registers them: path templates
/// (`/v1/activities/{activity}/state`) and their methods.
final class DeclaredRoutes: Sendable {
    private let routes = Mutex<[(segments: [Substring], methods: Set<HTTPRequest.Method>)]>([])

    func add(method: HTTPRequest.Method, path: String) {
        let segments = path.split(separator: "/")
        routes.withLock { routes in
            if let index = routes.firstIndex(where: { $0.segments == segments }) {
                routes[index].methods.insert(method)
            } else {
                routes.append((segments, [method]))
            }
        }
    }

    /// The methods declared for `path`, or nil when no operation has that path.
    func methods(path: String) -> Set<HTTPRequest.Method>? {
        // "/" is the route of no segments (a declared "/" splits to none).
        let segments = path == "/" ? [] : path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return routes.withLock { routes in
            routes.first { route in
                route.segments.count == segments.count
                    && zip(route.segments, segments).allSatisfy { template, segment in
                        template.first == "{" ? !segment.isEmpty : template == segment
                    }
            }?.methods
        }
    }
}

/// Answers a method the API does not declare on a path it does (`TRACE /v1/events`) with 405 and `Allow`,
/// instead of the router's 404, before any key is checked: it is the same answer for everyone.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: DeclaredRoutes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let methods = routes.methods(path: request.uri.path), !methods.contains(request.method) else {
            return try await next(request, context)
        }
        let allowed = methods.map(\.rawValue).sorted().joined(separator: ", ")
        var error = APIError(
            status: .methodNotAllowed, code: "methodNotAllowed",
            message: "\(request.method.rawValue) is not an operation of \(request.uri.path); allowed: \(allowed)")
        error.allow = allowed
        throw error
    }
}

/// Registers the generated handlers on `base` and notes each operation in `routes`.
struct RecordingServerTransport: ServerTransport {
    let base: any ServerTransport
    let routes: DeclaredRoutes

    func register(
        _ handler: @Sendable @escaping (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (
            HTTPResponse, HTTPBody?
        ),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        routes.add(method: method, path: path)
        try base.register(handler, method: method, path: path)
    }
}
