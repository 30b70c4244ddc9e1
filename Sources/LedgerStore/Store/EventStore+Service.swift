import ServiceLifecycle

/// In a `ServiceGroup`, the store waits for graceful shutdown, then refuses new appends and drains the
/// queued ones. Appends do not need it running: the group-commit writer starts on demand.
extension EventStore: Service {
    public func run() async throws {
        try? await gracefulShutdown()
        await drain()
    }
}
