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

    /// The rows of one statement (`$1`… placeholders), or a storage error naming the database.
    package func rows(_ sql: String, _ bindings: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        try connection.withLock { connection in
            do {
                if connection == nil {
                    connection = try PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.any(), configuration: url.connectionConfiguration(),
                        id: 1, logger: logger
                    ).wait()
                }
                return try connection!.rows(sql, bindings, logger: logger)
            } catch {
                try? connection?.close().wait()
                connection = nil
                throw PostgresEventLog.storageError(error, location: url.redacted)
            }
        }
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
