import CoreMetrics
import Synchronization

/// What the proxy counts, in the factory the service's `/metrics` prints (`ServerMetrics.factory`).
public final class APNsProxyMetrics: Sendable {
    /// Why an exchange the proxy answered was not recorded.
    public enum Unrecorded: String, Sendable, CaseIterable {
        /// The ledger could not write it (unwritable file, busy past the timeout) until its hold ran out.
        case storage
        /// The push does not map to ledger events (not a liveactivity push, an `aps` the validator refuses).
        case invalid
        /// The recording queue was full (the ledger is slower than the pushes): dropped, never waited for.
        case queueFull
        /// The token was still unknown to the ledger when its hold time ran out, or the hold was full.
        case unattributed
    }

    private let factory: any MetricsFactory
    private let answers = Mutex<[Int: CoreMetrics.Counter]>([:])
    private let unrecorded: [Unrecorded: CoreMetrics.Counter]
    private let recordedCounter: CoreMetrics.Counter
    private let upstreamFailures: CoreMetrics.Counter
    private let recordFailures: CoreMetrics.Counter
    private let unusableTimestamps: CoreMetrics.Counter
    private let held: CoreMetrics.Recorder

    public init(factory: any MetricsFactory) {
        self.factory = factory
        var unrecorded: [Unrecorded: CoreMetrics.Counter] = [:]
        for reason in Unrecorded.allCases {
            unrecorded[reason] = CoreMetrics.Counter(
                label: "apns_proxy_unrecorded_total", dimensions: [("reason", reason.rawValue)], factory: factory)
        }
        self.unrecorded = unrecorded
        recordedCounter = CoreMetrics.Counter(label: "apns_proxy_recorded_total", factory: factory)
        upstreamFailures = CoreMetrics.Counter(label: "apns_proxy_upstream_failures_total", factory: factory)
        recordFailures = CoreMetrics.Counter(
            label: "apns_proxy_record_failures_total", dimensions: [("reason", "storage")], factory: factory)
        unusableTimestamps = CoreMetrics.Counter(label: "apns_proxy_unusable_timestamps_total", factory: factory)
        held = CoreMetrics.Recorder(label: "apns_proxy_unattributed_held", aggregate: false, factory: factory)
    }

    /// One answer the proxy gave a caller (APNs' status, or the proxy's own 4xx/5xx).
    func answered(status: Int) {
        let counter = answers.withLock { counters in
            if let known = counters[status] { return known }
            let made = CoreMetrics.Counter(
                label: "apns_proxy_answers_total", dimensions: [("status", String(status))], factory: factory)
            counters[status] = made
            return made
        }
        counter.increment()
    }

    func upstreamFailed() { upstreamFailures.increment() }
    func recorded() { recordedCounter.increment() }
    /// One attempt to record failed in storage (it is tried again).
    func recordFailed() { recordFailures.increment() }
    func unrecorded(_ reason: Unrecorded) { unrecorded[reason]?.increment() }
    /// A push recorded without APNs' `timestamp`, which was no usable time.
    func unusableTimestamp() { unusableTimestamps.increment() }
    func holding(_ count: Int) { held.record(count) }
}
