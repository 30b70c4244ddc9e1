import Hummingbird
import Logging

/// Counts responses by method and status — including the error responses built by ``APIErrorMiddleware``,
/// so it sits outside it — and logs each request at debug level.
struct HTTPMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let status: Int
        do {
            let response = try await next(request, context)
            status = response.status.code
            metrics.recordResponse(method: request.method.rawValue, status: status)
            log(request, context: context, status: status, since: start)
            return response
        } catch {
            metrics.recordResponse(method: request.method.rawValue, status: 500)
            log(request, context: context, status: 500, since: start)
            throw error
        }
    }

    private func log(_ request: Request, context: Context, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        context.logger.debug(
            "request",
            metadata: [
                "http.method": .string(request.method.rawValue),
                "http.path": .string(request.uri.path),
                "http.status": .stringConvertible(status),
                "http.duration_ms": .stringConvertible(
                    Double(elapsed.components.attoseconds) / 1e15
                        + Double(elapsed.components.seconds) * 1000),
            ]
        )
    }
}
