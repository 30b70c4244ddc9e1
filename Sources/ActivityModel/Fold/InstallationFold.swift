/// Installation streams: push-to-start tokens (per installation, rotating).
public enum InstallationFold: Sendable {
    /// The push-to-start token history of an installation as of `asOf`, oldest first; the last is current.
    /// `events` may hold any events; only `startToken` events of `installation:<id>` count.
    public static func startTokens(installation: String, events: [PositionedEvent], asOf: Instant) -> [TokenRecord] {
        let stream = StreamName.installation(installation)
        return events.filter { $0.event.stream == stream && $0.event.at <= asOf }
            .sorted { ($0.event.at, $0.position) < ($1.event.at, $1.position) }
            .compactMap { positioned in
                guard case .startToken(let data) = positioned.event.data else { return nil }
                return TokenRecord(
                    token: data.token, at: positioned.event.at, environment: data.environment, deadFrom: nil,
                    event: positioned.event.id ?? "#\(positioned.position)")
            }
    }
}
