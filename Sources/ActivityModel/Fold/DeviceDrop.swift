/// Why a device drops an update or end without acting on it, decided from the event alone: content over the
/// 4096-byte limit of ActivityKit, or a timestamp more than about 8 h ahead of the event's own time (APNs facts in
/// SPEC). A dropped end is recorded but ends nothing.
///
/// The one home of the rule: the fold records the reason as the delivery's own rejection
/// (`ActivityTimeline.record`), and the `activities` projection asks it whether an end sets `ended_at`
/// (`ActivitySummary.applyEnd`), so the projection never calls an activity ended that the fold keeps going.
public enum DeviceDrop: String, Sendable {
    /// The content state is over `ActivityContent.maximumStateSize` encoded bytes.
    case payloadTooLarge
    /// The timestamp is more than 8 h after the event's time (or too large to be a time at all).
    case futureTimestamp

    /// Why the device drops an update or end whose content is `contentTooLarge`, with `timestamp` (Unix seconds),
    /// recorded at `at` (Unix milliseconds); nil when it acts on it. Overflow counts as the future: a timestamp
    /// whose milliseconds do not fit in 64 bits is dropped, never wrapped into the past.
    public static func reason(contentTooLarge: Bool, timestamp: Int64, at: Int64) -> DeviceDrop? {
        if contentTooLarge { return .payloadTooLarge }
        let milliseconds = timestamp.multipliedReportingOverflow(by: 1000).partialValue
        if timestamp > Int64.max / 1000 || milliseconds > at &+ 8 * Instant.hour { return .futureTimestamp }
        return nil
    }

    /// The same for an end recorded at `at`.
    public static func reason(_ end: EndData, at: Instant) -> DeviceDrop? {
        reason(contentTooLarge: end.content?.isTooLarge == true, timestamp: end.timestamp, at: at.milliseconds)
    }
}
