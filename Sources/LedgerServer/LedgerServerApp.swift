import Hummingbird
import Ledger
import Logging
import NIOCore
import OpenAPIHummingbird
internal import OpenAPIRuntime
import ServiceLifecycle
import UnixSignals

/// Builds and runs the HTTP service.
public enum LedgerServerApp: Sendable {
    /// The Hummingbird application serving `Schemas/openapi.yaml` over `ledger`.
    ///
    /// - Parameters:
    ///   - configuration: Address, port and limits.
    ///   - ledger: The ledger; every call is scoped to the caller's app.
    ///   - keys: Where API keys are checked.
    ///   - metrics: What `/metrics` prints; pass one to read it in tests.
    ///   - logger: The service's logger (the caller bootstraps logging).
    ///   - onServerRunning: Called with the bound port once the server listens.
    public static func build(
        configuration: LedgerServerConfiguration,
        ledger: Ledger,
        keys: APIKeyStore,
        metrics: ServerMetrics = ServerMetrics(),
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let router = try makeRouter(
            configuration: configuration, ledger: ledger, keys: keys, metrics: metrics, logger: logger
        )
        return Application(
            router: router,
            server: .http1(
                idleTimeout: configuration.idleTimeout, headTimeout: configuration.headTimeout,
                bodyTimeout: configuration.bodyTimeout
            ),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "activity-ledger"
            ),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    /// For `LoggingSystem.bootstrap`: log lines written while a request is handled carry `ledger.app` and
    /// `ledger.key` (the caller's API key id, never the secret).
    public static var logMetadataProvider: Logger.MetadataProvider { Caller.metadataProvider }

    /// Runs the service until SIGTERM or SIGINT, then stops accepting connections and lets in-flight
    /// requests (and so in-flight appends) finish before returning.
    ///
    /// `metrics` is what `/metrics` prints (other services, e.g. the APNs proxy, count into its `factory`).
    /// `services` (e.g. the ledger's `EventStore`) start before the HTTP server and, as ServiceGroup shuts down in
    /// reverse order and waits for each, are told to shut down only once the server has answered every in-flight
    /// request: the store then refuses later appends and drains its queue.
    public static func run(
        configuration: LedgerServerConfiguration,
        ledger: Ledger,
        keys: APIKeyStore,
        metrics: ServerMetrics = ServerMetrics(),
        services: [any Service] = [],
        logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let app = try build(
            configuration: configuration, ledger: ledger, keys: keys, metrics: metrics, logger: logger,
            onServerRunning: onServerRunning
        )
        let group = ServiceGroup(
            configuration: .init(
                services: services + [app],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }

    static func makeRouter(
        configuration: LedgerServerConfiguration,
        ledger: Ledger,
        keys: APIKeyStore,
        metrics: ServerMetrics,
        logger: Logger
    ) throws -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        // Outermost first: count every response, render every error, answer undeclared methods (405), then
        // authenticate, refuse a query the API cannot read as it was meant (`QueryShapeMiddleware`), then bound the body.
        router.add(middleware: HTTPMetricsMiddleware(metrics: metrics))
        router.add(middleware: APIErrorMiddleware())
        let declared = DeclaredRoutes()
        router.add(middleware: MethodNotAllowedMiddleware(routes: declared))
        router.add(middleware: APIKeyMiddleware(keys: APIKeyCache(store: keys, ttl: configuration.apiKeyCacheTTL)))
        router.add(middleware: QueryShapeMiddleware())
        router.add(middleware: BodyLimitMiddleware(maxBytes: configuration.maxBodyBytes))
        let api = LedgerAPI(
            ledger: ledger, configuration: configuration, metrics: metrics,
            logger: logger
        )
        // Innermost, so that it runs behind everything above; routes take the middleware added before them. With
        // `rawAppends` off it only refuses a key given twice, as it does before handing any body on.
        router.add(
            middleware: RawAppendMiddleware(
                api: api, maxBodyBytes: configuration.maxBodyBytes, serveRaw: configuration.rawAppends))
        // Compact JSON, `/` unescaped, for what the generated layer still writes itself (errors it raises); the
        // ledger's answers are the bytes it rendered (RenderedDocument).
        WebRoutes.add(to: router, routes: declared)
        try api.registerHandlers(
            on: RecordingServerTransport(base: router, routes: declared),
            configuration: Configuration(jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes]),
            middlewares: [RenderedDocumentMiddleware()]
        )
        return router
    }
}
