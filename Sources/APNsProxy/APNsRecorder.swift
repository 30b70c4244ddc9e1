import ActivityModel
import Ledger
import Logging
import ServiceLifecycle
import Synchronization

/// Records what the proxy forwarded, off the response path: a bounded queue drained by concurrent appends
/// (so that the store's group commit batches them), and a bounded hold for pushes to tokens the ledger does
/// not know yet and for pushes the ledger failed to write, retried every second until the hold time runs out.
///
/// Nothing here ever makes a caller wait: ``submit(_:)`` returns at once, and a full queue drops the exchange
/// (counted as `queueFull`). Failures are counted in ``APNsProxyMetrics`` and logged at most once per 10 s per
/// kind. On graceful shutdown the queue is drained before the store shuts down (the recorder runs before it in the
/// service group); what is still held for an unknown token then is counted as `unattributed`.
public final class APNsRecorder: Service, Sendable {
    public struct Configuration: Sendable {
        /// Exchanges waiting to be recorded; beyond it new ones are dropped.
        public var queueCapacity = 10_000
        /// Appends in flight at once.
        public var concurrency = 16
        /// How long a push to an unknown token, or one the ledger failed to write, is held and retried (counted
        /// from the push's time).
        public var hold: Duration = .seconds(600)
        /// Pushes held at once; beyond it new ones are counted as unattributed.
        public var holdCapacity = 10_000
        /// How often the held pushes are tried again.
        public var retryInterval: Duration = .seconds(1)
        /// Where unfinished exchanges are journaled (``RecordingJournal``), e.g. `<db>.apns-journal`; nil: only
        /// in memory, so a killed process loses what it had not recorded yet.
        public var journal: String?

        public init() {}
    }

    private let ledger: Ledger
    private let metrics: APNsProxyMetrics
    private let configuration: Configuration
    private let log: RateLimitedLog
    private let stream: AsyncStream<ProxiedExchange>
    private let continuation: AsyncStream<ProxiedExchange>.Continuation
    private let held = Mutex<[ProxiedExchange]>([])
    private let journal: RecordingJournal?

    public init(ledger: Ledger, metrics: APNsProxyMetrics, configuration: Configuration = .init(), logger: Logger)
        throws(APNsProxyError)
    {
        self.journal = try configuration.journal.map { base throws(APNsProxyError) in try RecordingJournal(base: base) }
        self.ledger = ledger
        self.metrics = metrics
        self.configuration = configuration
        self.log = RateLimitedLog(logger: logger)
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(configuration.queueCapacity))
    }

    /// Journals and queues `exchange`; never waits for the ledger.
    func submit(_ exchange: ProxiedExchange) {
        var exchange = exchange
        exchange.generation = journal?.append(exchange)
        if case .dropped = continuation.yield(exchange) {
            finished(exchange)
            metrics.unrecorded(.queueFull)
            log.error("queueFull", "APNs exchange not recorded: the recording queue is full (the ledger is slower than the pushes)")
        }
    }

    public func run() async throws {
        if let journal {
            // What a killed predecessor answered but had not recorded: queued again (and journaled anew).
            for exchange in journal.recover() { submit(exchange) }
            journal.forgetRecovered()
        }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.retryHeld() }
                await self.drain()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.continuation.finish()
        }
        // Still held (unknown token, or the ledger failing): left in the journal, held again by the next run.
        journal?.close()
    }

    private func finished(_ exchange: ProxiedExchange) {
        if let generation = exchange.generation { journal?.finished(generation) }
    }

    private func drain() async {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for await exchange in stream {
                if running >= configuration.concurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask { await self.record(exchange) }
                running += 1
            }
        }
    }

    /// Tries the held exchanges again every `retryInterval` until cancelled: those past their hold are given up;
    /// the others are recorded, `concurrency` at a time, until one fails in storage (the ledger still cannot
    /// write: the rest wait for the next pass untried).
    private func retryHeld() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: configuration.retryInterval) } catch { return }
            let due = held.withLock { held in
                defer { held.removeAll(keepingCapacity: true) }
                return held
            }
            metrics.holding(0)
            let now = Ledger.now()
            let (seconds, attoseconds) = configuration.hold.components
            let hold = seconds * 1000 + attoseconds / 1_000_000_000_000_000
            var waiting: [ProxiedExchange] = []
            for exchange in due {
                guard now.milliseconds - exchange.at.milliseconds >= hold else {
                    waiting.append(exchange)
                    continue
                }
                finished(exchange)
                if exchange.heldFor == .storage {
                    metrics.unrecorded(.storage)
                    log.error(
                        "storageGaveUp", "APNs exchange not recorded: the ledger could not write it within the hold",
                        metadata: ["ledger.app": .string(exchange.app)])
                } else {
                    metrics.unrecorded(.unattributed)
                    log.error(
                        "unattributed",
                        "APNs exchange not recorded: no activity has push token \(exchange.token.map { String($0.prefix(8)) } ?? "")… after the hold",
                        metadata: ["ledger.app": .string(exchange.app)])
                }
            }
            var next = waiting[...]
            while !next.isEmpty {
                let batch = next.prefix(configuration.concurrency)
                next = next.dropFirst(batch.count)
                let storageFailed = await withTaskGroup(of: Bool.self) { group in
                    for exchange in batch { group.addTask { await self.record(exchange) == .storage } }
                    return await group.contains(true)
                }
                if storageFailed {
                    for exchange in next { self.hold(exchange, for: exchange.heldFor ?? .storage) }
                    break
                }
            }
        }
    }

    enum Outcome { case recorded, held, storage, givenUp }

    @discardableResult
    private func record(_ exchange: ProxiedExchange) async -> Outcome {
        do {
            try await ingest(exchange)
            finished(exchange)
            metrics.recorded()
            if exchange.unusableTimestamp {
                metrics.unusableTimestamp()
                log.error(
                    "unusableTimestamp",
                    "APNs answered \(exchange.status) with a timestamp that is no time (recorded without it): "
                        + String(decoding: exchange.answerBody.prefix(200), as: UTF8.self),
                    metadata: ["ledger.app": .string(exchange.app)])
            }
            return .recorded
        } catch let error as LedgerError where error.code == .notFound && exchange.token != nil {
            hold(exchange, for: .unknownToken)
            return .held
        } catch let error as LedgerError where error.code == .badInput || error.code == .conflict || error.code == .forbidden {
            finished(exchange)
            metrics.unrecorded(.invalid)
            log.error("invalid", "APNs exchange not recorded: \(error.message)", metadata: ["ledger.app": .string(exchange.app)])
            return .givenUp
        } catch {
            // Busy past the timeout, unwritable, shutting down: counted, and tried again until the hold runs out.
            metrics.recordFailed()
            log.error(
                "storage", "APNs exchange not recorded yet (retrying): \(error)", metadata: ["ledger.app": .string(exchange.app)])
            hold(exchange, for: .storage)
            return .storage
        }
    }

    /// Records `exchange`. The ledger attributes a token push under the first spelling of its token it knows, in
    /// either hex case (`Ledger.tokenSpellings`), as it does for `POST /v1/apns`.
    private func ingest(_ exchange: ProxiedExchange) async throws {
        // The exchange's journaled key: a retry under a recorded apns-id gets ids of its own, the same ones each
        // time it is replayed (`Ledger.ingestAPNs`).
        _ = try await ledger.ingestAPNs(exchange.document(token: exchange.token), app: exchange.app, attempt: exchange.key)
    }

    private func hold(_ exchange: ProxiedExchange, for reason: ProxiedExchange.HeldFor) {
        var exchange = exchange
        exchange.heldFor = reason
        let count: Int? = held.withLock { held in
            guard held.count < configuration.holdCapacity else { return nil }
            held.append(exchange)
            return held.count
        }
        if let count {
            metrics.holding(count)
        } else {
            finished(exchange)
            metrics.unrecorded(reason == .storage ? .storage : .unattributed)
            log.error("holdFull", "APNs exchange not recorded: \(configuration.holdCapacity) exchanges are held already")
        }
    }
}
