import ActivityModel
import Foundation
import Ledger
import LedgerStore
import Logging

/// A real ledger file in a temporary directory, for tests.
public final class TemporaryLedger: Sendable {
    public let directory: TemporaryDirectory
    public let ledger: Ledger
    public var path: String { ledger.path }

    /// `queriesOnCallerThread: false` configures the ledger as `serve` does (`LedgerConfiguration`); `store`
    /// changes the store's configuration (e.g. small segments, so that small logs seal).
    public init(
        durability: StoreConfiguration.Durability = .normal, queriesOnCallerThread: Bool = true,
        store: (inout StoreConfiguration) -> Void = { _ in }
    ) throws {
        directory = TemporaryDirectory()
        var configuration = LedgerConfiguration()
        configuration.store.durability = durability
        configuration.queriesOnCallerThread = queriesOnCallerThread
        store(&configuration.store)
        ledger = try Ledger(path: directory.file("ledger.sqlite"), configuration: configuration, logger: Logger(label: "test"))
    }

    /// Decodes JSON Lines text (one event per line) and appends it.
    @discardableResult
    public func append(_ jsonLines: String, app: String? = nil) async throws -> [AppendOutcome] {
        let events = try jsonLines.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }.map {
            try EventCodec.decode(String($0))
        }
        return try await ledger.append(events, app: app)
    }

    /// Writes text to a file in the directory and returns its path.
    public func write(_ text: String, to name: String) throws -> String {
        let path = directory.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
