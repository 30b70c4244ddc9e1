/// How the HTTP service listens and what it accepts.
public struct LedgerServerConfiguration: Sendable {
    /// Address to bind, `127.0.0.1` by default.
    public var host: String
    /// Port to bind, 8080 by default; 0 picks a free one.
    public var port: Int
    /// Largest request body accepted; larger ones get 413 before any of it is parsed.
    public var maxBodyBytes: Int
    /// Longest a feed long-poll is held, in seconds; a larger `wait` (up to the API's 60) is cut to it.
    public var maxFeedWaitSeconds: Double
    /// How often a waiting feed request re-reads the head position when no append signalled it (appends
    /// from another process, e.g. `import`, do not signal).
    public var feedPollInterval: Duration
    /// How many feed requests may wait for an append at once; more are answered at once with what there is (a
    /// shorter poll is still correct). Each waiting poll holds its connection and ~50 KB: a client that opened
    /// thousands of polls and dropped them held 5,000 sockets and 324 MB until their waits ran out.
    public var maxWaitingFeeds: Int = 1024
    /// How long an authenticated key is remembered; a revoked key keeps working for at most this long (SPEC §7:
    /// revocation takes effect within a second, also when `keys revoke` runs in another process).
    public var apiKeyCacheTTL: Duration
    /// Serve `POST /v1/events` and `/v1/batches` from the raw body (true, the default): parsed once by the
    /// ledger's JSON parser instead of decoded and re-encoded by the generated OpenAPI layer. Same contract
    /// either way; false exists to compare the two.
    public var rawAppends: Bool
    /// How long a connection may sit with no request in progress before it is closed (keep-alive).
    public var idleTimeout: Duration = .seconds(60)
    /// How long a request head may take from its first byte (or the end of the previous response) to its end;
    /// then the server answers 408 and closes the connection.
    public var headTimeout: Duration = .seconds(10)
    /// How long a request body may take from the end of its head to its end (a trickled body counts as slow, not
    /// idle); then the route answers 408 and the connection closes. The default reads a 4 MiB body at 140 kB/s.
    public var bodyTimeout: Duration = .seconds(30)

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        maxBodyBytes: Int = 4 << 20,
        maxFeedWaitSeconds: Double = 60,
        feedPollInterval: Duration = .milliseconds(250),
        apiKeyCacheTTL: Duration = .milliseconds(500),
        rawAppends: Bool = true
    ) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.maxFeedWaitSeconds = maxFeedWaitSeconds
        self.feedPollInterval = feedPollInterval
        self.apiKeyCacheTTL = apiKeyCacheTTL
        self.rawAppends = rawAppends
    }
}
