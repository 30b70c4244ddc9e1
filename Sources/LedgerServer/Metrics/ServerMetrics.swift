import CoreMetrics
import Ledger
import Metrics
import Prometheus
import Synchronization

/// The service's metrics, in their own Prometheus registry (no global `MetricsSystem.bootstrap`, so each
/// application and each test has its own numbers).
public final class ServerMetrics: Sendable {
    /// Holds everything `/metrics` prints.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// For other parts of the service (the APNs proxy) to count into what `/metrics` prints.
    public var metricsFactory: any MetricsFactory { factory }
    private let appendedEvents: CoreMetrics.Counter
    private let duplicateEvents: CoreMetrics.Counter
    private let batchSize: CoreMetrics.Recorder
    private let commitLatency: CoreMetrics.Timer
    /// One counter per method and status, made once: making one looks it up in the registry by its labels.
    private let responseCounters = Mutex<[ResponseKey: CoreMetrics.Counter]>([:])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets["ledger_batch_size"] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000]
        factory.durationHistogramBuckets["ledger_commit_duration_seconds"] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        self.factory = factory
        appendedEvents = CoreMetrics.Counter(label: "ledger_appended_events_total", factory: factory)
        duplicateEvents = CoreMetrics.Counter(label: "ledger_duplicate_events_total", factory: factory)
        batchSize = CoreMetrics.Recorder(label: "ledger_batch_size", aggregate: true, factory: factory)
        commitLatency = CoreMetrics.Timer(label: "ledger_commit_duration_seconds", factory: factory)
    }

    /// Records one acknowledged append request of `results`, durable after `duration`.
    func recordAppend(_ results: [AppendOutcome], duration: Duration) {
        let duplicates = results.filter(\.duplicate).count
        appendedEvents.increment(by: results.count - duplicates)
        if duplicates > 0 { duplicateEvents.increment(by: duplicates) }
        batchSize.record(results.count)
        commitLatency.recordNanoseconds(duration.nanoseconds)
    }

    /// Counts the verdicts of an audit the service returned.
    func recordVerdicts(_ verdicts: [String]) {
        for verdict in verdicts {
            CoreMetrics.Counter(label: "ledger_verdicts_total", dimensions: [("verdict", verdict)], factory: factory)
                .increment()
        }
    }

    /// Counts one HTTP response.
    func recordResponse(method: String, status: Int) {
        let key = ResponseKey(method: method, status: status)
        let counter = responseCounters.withLock { counters in
            if let known = counters[key] { return known }
            let made = CoreMetrics.Counter(
                label: "http_responses_total", dimensions: [("method", method), ("status", String(status))],
                factory: factory)
            counters[key] = made
            return made
        }
        counter.increment()
    }

    private struct ResponseKey: Hashable {
        var method: String
        var status: Int
    }

    /// The Prometheus text exposition.
    public func exposition() -> String {
        registry.emitToString()
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
