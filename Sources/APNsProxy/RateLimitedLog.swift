import Logging
import Synchronization

/// Logs at most one line per kind per `interval`; the next line says how many were left out meanwhile, so a
/// failing ledger under thousands of pushes a second writes a line every few seconds, not thousands.
final class RateLimitedLog: Sendable {
    private struct Slot {
        var last: ContinuousClock.Instant
        var suppressed: Int
    }

    private let logger: Logger
    private let interval: Duration
    private let slots = Mutex<[String: Slot]>([:])

    init(logger: Logger, interval: Duration = .seconds(10)) {
        self.logger = logger
        self.interval = interval
    }

    func error(_ kind: String, _ message: @autoclosure () -> String, metadata: Logger.Metadata = [:]) {
        let now = ContinuousClock.now
        let suppressed: Int? = slots.withLock { slots in
            if var slot = slots[kind], now - slot.last < interval {
                slot.suppressed += 1
                slots[kind] = slot
                return nil
            }
            let left = slots[kind]?.suppressed ?? 0
            slots[kind] = Slot(last: now, suppressed: 0)
            return left
        }
        guard let suppressed else { return }
        var metadata = metadata
        metadata["apns.kind"] = .string(kind)
        if suppressed > 0 { metadata["apns.suppressed"] = .stringConvertible(suppressed) }
        logger.error("\(message())", metadata: metadata)
    }
}
