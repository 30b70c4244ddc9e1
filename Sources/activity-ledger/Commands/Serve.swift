import APNsProxy
import ArgumentParser
import Foundation
import Ledger
import LedgerServer
import LedgerStore
import Logging
import ServiceLifecycle

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP service (Schemas/openapi.yaml) on the ledger file.",
        discussion: """
            Each option falls back to an environment variable: LEDGER_HOST, LEDGER_PORT, LEDGER_DB (used when \
            --db is not given), LEDGER_DURABILITY, LEDGER_MAX_BODY_BYTES, LEDGER_MAX_FEED_WAIT, LEDGER_MAX_WAITING_FEEDS, \
            LEDGER_BUSY_TIMEOUT, \
            LEDGER_IDLE_TIMEOUT, LEDGER_HEAD_TIMEOUT, LEDGER_BODY_TIMEOUT, LEDGER_KEEP_UNSEALED, LEDGER_READER_MAP_MIB. Older events are sealed into \
            compressed segments in the background (every 2 s, whole segments of 4096 events beyond the newest \
            --keep-unsealed; -1 turns it off). SIGTERM or SIGINT stop accepting requests, \
            let in-flight appends finish, drain the store's queue and exit 0.

            With --apns-proxy-port, serve also speaks the APNs provider API (HTTP/2: h2c, or TLS with \
            --apns-proxy-cert/--apns-proxy-key), forwards each push to --apns-upstream unchanged and records it \
            (README "APNs proxy"). Callers send x-ledger-key: <an API key with ingest scope>.

            Example:
              activity-ledger serve --db ledger.sqlite --port 8080 --durability full
              activity-ledger serve --db ledger.sqlite --apns-proxy-port 8443 --apns-upstream sandbox
            """
    )

    enum Durability: String, ExpressibleByArgument, CaseIterable, Sendable {
        /// Acknowledge an append once SQLite has synced it (synchronous=FULL).
        case full
        /// WAL with synchronous=NORMAL: survives a process crash, not a power loss.
        case normal
    }

    @OptionGroup var options: GlobalOptions
    @OptionGroup(title: "APNs proxy") var apns: APNsProxyOptions

    @Option(help: "Address to listen on (env LEDGER_HOST). [default: 127.0.0.1]")
    var host: String?

    @Option(help: "Port to listen on, 0 for any free one (env LEDGER_PORT). [default: 8080]")
    var port: Int?

    @Option(help: "full or normal (env LEDGER_DURABILITY). [default: full]")
    var durability: Durability?

    @Option(help: "Largest request body in bytes (env LEDGER_MAX_BODY_BYTES). [default: 4194304]")
    var maxBodyBytes: Int?

    @Option(help: "Longest a feed long-poll is held, in seconds (env LEDGER_MAX_FEED_WAIT). [default: 60]")
    var maxFeedWait: Double?

    @Option(help: "Feed long-polls that may wait at once; more are answered at once (env LEDGER_MAX_WAITING_FEEDS). [default: 1024]")
    var maxWaitingFeeds: Int?

    @Option(help: "Seconds a connection may idle between requests, 0: no limit (env LEDGER_IDLE_TIMEOUT). [default: 60]")
    var idleTimeout: Double?

    @Option(help: "Seconds a request head may take to arrive, then 408 (env LEDGER_HEAD_TIMEOUT). [default: 10]")
    var headTimeout: Double?

    @Option(help: "Seconds a request body (or an APNs proxy push's body) may take to arrive, then 408 (env LEDGER_BODY_TIMEOUT). [default: 30]")
    var bodyTimeout: Double?

    @Option(parsing: .unconditional, help: "Newest events kept as rows; older ones are sealed in the background, -1: never (env LEDGER_KEEP_UNSEALED). [default: 16384]")
    var keepUnsealed: Int?

    @Option(help: "MiB of the file each reader connection maps into memory, 0: none (env LEDGER_READER_MAP_MIB). [default: 0]")
    var readerMapMib: Int?

    /// `serve` maps none of its file unless asked. Mapped file pages count in a process's resident size once per
    /// connection that mapped them: under 20,000 random state/timeline/audit requests a server mapping 256 MiB per
    /// reader reached 334 MiB resident on a 330k-event file (777 MB on a 1M-event one), without the map 138 MiB, and
    /// it answered as many requests per second either way (BENCHMARKS.md, session 33). One-shot commands keep
    /// `StoreConfiguration.readerMapBytes` (a `state --at` 15 % faster).
    static let defaultReaderMapMib = 0

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let host = host ?? environment["LEDGER_HOST"] ?? "127.0.0.1"
        let port = try port ?? Self.integer(environment["LEDGER_PORT"], name: "LEDGER_PORT") ?? 8080
        let durability = try durability ?? Self.durability(environment["LEDGER_DURABILITY"]) ?? .full
        let maxBodyBytes =
            try maxBodyBytes ?? Self.integer(environment["LEDGER_MAX_BODY_BYTES"], name: "LEDGER_MAX_BODY_BYTES")
            ?? 4 << 20
        let maxFeedWait =
            try maxFeedWait ?? Self.seconds(environment["LEDGER_MAX_FEED_WAIT"], name: "LEDGER_MAX_FEED_WAIT") ?? 60
        let maxWaitingFeeds =
            try maxWaitingFeeds ?? Self.integer(environment["LEDGER_MAX_WAITING_FEEDS"], name: "LEDGER_MAX_WAITING_FEEDS")
            ?? 1024
        guard maxWaitingFeeds >= 0 else { throw ValidationError("--max-waiting-feeds must be 0 or more") }
        let db = options.db  // --db, else LEDGER_DB, else ./ledger.sqlite
        try options.checkURL()
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, got \(port)") }
        guard (0...60).contains(maxFeedWait) else { throw ValidationError("--max-feed-wait must be 0…60 seconds") }
        guard maxBodyBytes > 0 else { throw ValidationError("--max-body-bytes must be positive") }
        let timeouts = try readTimeouts(environment)
        let keepUnsealed =
            try keepUnsealed ?? Self.integer(environment["LEDGER_KEEP_UNSEALED"], name: "LEDGER_KEEP_UNSEALED") ?? 16_384
        guard keepUnsealed >= -1 else { throw ValidationError("--keep-unsealed must be -1 (never seal) or at least 0") }
        let readerMapMib =
            try readerMapMib ?? Self.integer(environment["LEDGER_READER_MAP_MIB"], name: "LEDGER_READER_MAP_MIB")
            ?? Self.defaultReaderMapMib
        guard (0...65536).contains(readerMapMib) else { throw ValidationError("--reader-map-mib must be 0…65536") }
        let proxyConfiguration = try apns.configuration(host: host)

        let level = Logger.Level(rawValue: environment["LOG_LEVEL"] ?? "") ?? .info
        LoggingSystem.bootstrap({ label, metadataProvider in
            LineLogHandler(label: label, level: level, metadataProvider: metadataProvider)
        }, metadataProvider: LedgerServerApp.logMetadataProvider)
        let logger = Logger(label: "activity-ledger.serve")
        let busyTimeout = try options.busyTimeout(environment: environment)
        let ledger: Ledger
        let keys: APIKeyStore
        let hasKeys: Bool
        do {
            if case .sqlite(let path) = options.location {
                try StoreAccess.checkFile(path, option: "db", readOnly: false)
            }
            ledger = try await openLedger(
                options.location, durability: durability, busyTimeout: busyTimeout,
                sealing: keepUnsealed < 0 ? nil : .init(keepUnsealed: keepUnsealed), readerMapBytes: readerMapMib << 20,
                logger: logger)
            // The keys live in the ledger (its file, through the ledger's pool, or its database).
            keys = try APIKeyStore(ledger: ledger)
            hasKeys = try !keys.list().isEmpty
        } catch {
            throw reportFailure(error, db: db)
        }
        let configuration = LedgerServerConfiguration(
            host: host, port: port, maxBodyBytes: maxBodyBytes, maxFeedWaitSeconds: maxFeedWait
        )
        var served = configuration
        served.maxWaitingFeeds = maxWaitingFeeds
        (served.idleTimeout, served.headTimeout, served.bodyTimeout) = timeouts
        let metrics = ServerMetrics()
        var services: [any Service] = ledger.file.map { [$0] } ?? []
        if var proxyConfiguration = proxyConfiguration {
            proxyConfiguration.bodyTimeout = served.bodyTimeout
            // Beside the ledger file; for a database, in the working directory (one per process: it holds what
            // this process forwarded and has not recorded yet).
            proxyConfiguration.recorder.journal =
                if case .sqlite(let path) = options.location { path + ".apns-journal" } else {
                    environment["LEDGER_APNS_JOURNAL"] ?? "activity-ledger.apns-journal"
                }
            let scheme = proxyConfiguration.certificate == nil ? "h2c" : "https"
            let upstream = proxyConfiguration.upstream
            let proxy: APNsProxy
            do {
                proxy = try APNsProxy(
                    configuration: proxyConfiguration, ledger: ledger,
                    keys: APIKeyCache(store: keys, ttl: configuration.apiKeyCacheTTL),
                    metrics: APNsProxyMetrics(factory: metrics.metricsFactory), logger: logger
                ) { boundPort in
                    let line = "activity-ledger APNs proxy at \(scheme)://\(host):\(boundPort) (upstream \(upstream))\n"
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            } catch {
                throw ValidationError(error.message)
            }
            // Shut down in reverse: the proxy stops answering, then the recorder drains into the store.
            services += [proxy.recorder, proxy.server]
        }
        // The store drains in the group: the HTTP server (added last) stops first and lets in-flight requests
        // finish, then the store refuses later appends and waits for queued ones to commit.
        try await LedgerServerApp.run(
            configuration: served, ledger: ledger, keys: keys, metrics: metrics, services: services, logger: logger
        ) { boundPort in
            // Written unbuffered: scripts wait for this line to learn the port.
            var lines = [
                "activity-ledger listening on http://\(host):\(boundPort) (ledger \(ledger.path), durability \(durability))"
            ]
            if !hasKeys {
                lines.append("no API keys yet; create the first one with:")
                lines.append("  activity-ledger keys create --app BUNDLE_ID --scope ingest,read,admin --db \(ledger.path)")
            }
            FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
        await ledger.close()
    }

    /// --idle-timeout, --head-timeout and --body-timeout, or their environment variables.
    private func readTimeouts(_ environment: [String: String]) throws -> (Duration, Duration, Duration) {
        func timeout(_ option: Double?, _ variable: String, _ flag: String, default value: Double) throws -> Duration {
            let seconds = try option ?? Self.seconds(environment[variable], name: variable) ?? value
            guard seconds.isFinite, (0...86_400).contains(seconds) else {
                throw ValidationError("\(flag) must be 0…86400 seconds (0: no limit), got \(seconds)")
            }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }
        return (
            try timeout(idleTimeout, "LEDGER_IDLE_TIMEOUT", "--idle-timeout", default: 60),
            try timeout(headTimeout, "LEDGER_HEAD_TIMEOUT", "--head-timeout", default: 10),
            try timeout(bodyTimeout, "LEDGER_BODY_TIMEOUT", "--body-timeout", default: 30)
        )
    }

    private static func integer(_ text: String?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text) else { throw ValidationError("\(name) must be an integer, got '\(text)'") }
        return value
    }

    private static func seconds(_ text: String?, name: String) throws -> Double? {
        guard let text else { return nil }
        guard let value = Double(text) else { throw ValidationError("\(name) must be a number, got '\(text)'") }
        return value
    }

    private static func durability(_ text: String?) throws -> Durability? {
        guard let text else { return nil }
        guard let value = Durability(rawValue: text) else {
            throw ValidationError("LEDGER_DURABILITY must be full or normal, got '\(text)'")
        }
        return value
    }
}

/// Opens the ledger the service answers from, with the asked durability (a file's: PostgreSQL commits durably).
func openLedger(
    _ location: LedgerLocation, durability: Serve.Durability, busyTimeout: Duration,
    sealing: StoreConfiguration.BackgroundSealing?, readerMapBytes: Int, logger: Logger
) async throws -> Ledger {
    var configuration = LedgerConfiguration()
    // Queries wait on the ledger's read threads, never on a thread the HTTP handlers share.
    configuration.queriesOnCallerThread = false
    configuration.store.backgroundSealing = sealing
    configuration.store.readerMapBytes = readerMapBytes
    configuration.store.durability = durability == .full ? .full : .normal
    configuration.store.busyTimeout = busyTimeout
    return try await Ledger.open(location, configuration: configuration, logger: logger)
}
