import Foundation
import LedgerStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One connection of its own to a ledger's database, for short synchronous statements from code that cannot
/// await (the API key checks of every request, which the key cache keeps rare). Statements take turns; the
/// connection is opened on first use and again after a failure (a restarted server), so one bad moment never
/// leaves the process without keys.
///
/// Calls block their thread: never call them on an event loop.
package final class PostgresLine: Sendable {
    private let url: PostgresURL
    private let logger: Logger
    private let connection = Mutex<PostgresConnection?>(nil)

    package init(url: String, logger: Logger) throws {
        self.url = try PostgresURL(url)
        self.logger = logger
    }

    /// How long one statement (with its connect, when one is needed) may take before it fails as a storage error
    /// and the connection is dropped: a statement sent on a connection the server had just terminated (a restart,
    /// `pg_terminate_backend`) was never answered nor failed, and every later key check queued behind it.
    package static let statementTimeout = TimeAmount.seconds(10)

    /// The rows of one statement (`$1`… placeholders), or a storage error naming the database.
    package func rows(_ sql: String, _ bindings: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        try connection.withLock { connection in
            do {
                // A connection the server closed is replaced before it is used.
                if let open = connection, open.isClosed {
                    try? open.close().wait()
                    connection = nil
                }
                if connection == nil {
                    connection = try Self.bounded(
                        PostgresConnection.connect(
                            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: url.connectionConfiguration(),
                            id: 1, logger: logger))
                }
                let open = connection!
                precondition(!open.eventLoop.inEventLoop, "a blocking PostgreSQL query on the connection's event loop")
                return try Self.bounded(open.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)).rows
            } catch {
                try? connection?.close().wait()
                connection = nil
                throw PostgresEventLog.storageError(error, location: url.redacted)
            }
        }
    }

    /// Waits for `future` at most `statementTimeout`.
    private static func bounded<Value: Sendable>(_ future: EventLoopFuture<Value>) throws -> Value {
        let promise = future.eventLoop.makePromise(of: Value.self)
        let settled = Once()
        @Sendable func settle(_ result: Result<Value, any Error>) {
            guard settled.claim() else { return }
            promise.completeWith(result)
        }
        let timeout = future.eventLoop.scheduleTask(in: statementTimeout) {
            settle(.failure(PostgresLineTimeout()))
        }
        future.whenComplete { result in
            timeout.cancel()
            settle(result)
        }
        return try promise.futureResult.wait()
    }

    /// A connection still open is closed; it stays alive until the close completes (PostgresNIO asserts that a
    /// connection is closed before it is released).
    deinit {
        guard let open = connection.withLock({ $0 }) else { return }
        open.close().whenComplete { _ in withExtendedLifetime(open) {} }
    }

    /// Closes the connection.
    package func close() {
        connection.withLock { connection in
            try? connection?.close().wait()
            connection = nil
        }
    }
}

/// A statement of `PostgresLine` that the server did not answer within `statementTimeout`.
struct PostgresLineTimeout: Error, CustomStringConvertible {
    var description: String {
        "no answer within \(PostgresLine.statementTimeout.nanoseconds / 1_000_000_000) s (the connection is dropped and opened again at the next statement)"
    }
}

/// True for the first caller of `claim` only.
private final class Once: Sendable {
    private let done = Atomic(false)
    func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
