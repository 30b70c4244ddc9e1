import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Synchronization

/// In a `ServiceGroup`, the store seals in the background (when `configuration.backgroundSealing` is set) and
/// waits for graceful shutdown, then stops sealing between two segments, refuses new appends and drains the
/// queued ones. Appends do not need it running: the group-commit writer starts on demand.
extension EventStore: Service {
    public func run() async throws {
        guard let sealing = configuration.backgroundSealing, !configuration.readOnly else {
            try? await gracefulShutdown()
            await drain()
            return
        }
        let stopping = StopFlag()
        let sealer = Task { await sealInBackground(sealing, stopping: stopping) }
        try? await gracefulShutdown()
        stopping.set()
        sealer.cancel()
        await sealer.value
        await drain()
    }

    /// Every `interval`: seals the whole segments of events beyond the newest `keepUnsealed`, on a thread of its
    /// own (sealing blocks), stopping between segments once `stopping` is set. A failure is logged and tried
    /// again at the next interval: rows stay rows until then, which costs space, never an event.
    private func sealInBackground(_ sealing: StoreConfiguration.BackgroundSealing, stopping: StopFlag)
        async
    {
        while !Task.isCancelled {
            try? await Task.sleep(for: sealing.interval)
            if Task.isCancelled { return }
            do {
                guard let through = try sealingDue(keepUnsealed: sealing.keepUnsealed) else { continue }
                let report = try await onOwnThread { [self] in
                    try seal(through: through, continuing: { !stopping.isSet }, lockWait: Self.backgroundLockWait)
                }
                if report.segments > 0 {
                    logger.info(
                        "sealed events into segments",
                        metadata: [
                            "ledger.sealed.events": "\(report.events)", "ledger.sealed.segments": "\(report.segments)",
                            "ledger.sealed.through": "\(report.sealedThrough)",
                        ])
                }
            } catch {
                logger.warning("background sealing failed; rows stay rows until the next try",
                    metadata: ["ledger.error": "\(error)"])
            }
        }
    }

    /// How long a background sealing write waits for another process's lock before giving up until the next
    /// interval: an append queued behind it then still answers within about its own busy timeout.
    static let backgroundLockWait = Duration.milliseconds(50)

    /// The last position of the whole segments beyond the newest `keepUnsealed` events, or nil when there is
    /// not one whole segment to seal.
    func sealingDue(keepUnsealed: Int) throws -> Int64? {
        try pool.read { db in
            let sealed = try EventReader.sealedThrough(db)
            let segment = Int64(configuration.segmentEvents)
            let whole = (try lastPosition(in: db) - sealed - Int64(keepUnsealed)) / segment
            return whole > 0 ? sealed + whole * segment : nil
        }
    }
}

/// Runs blocking `work` on a new thread and returns its result.
private func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = "ledger-seal"
        thread.start()
    }
}

/// Set once, read from any thread.
final class StopFlag: Sendable {
    private let flag = Atomic(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}
