import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import LedgerPostgres
import LedgerStore
import Logging
import Synchronization

/// Exit codes scripts can rely on. Documented in the README.
enum Exit {
    static let notFound: Int32 = 1
    static let badInput: Int32 = 2
    static let conflict: Int32 = 3
    static let storage: Int32 = 4
}

/// The ledgers this process opened for its command (``GlobalOptions/openLedger(mustExist:readOnly:)``), closed
/// when the command ends, whatever it left running: a file's WAL is folded in before the process exits
/// (`Ledger.close`). Found: `seal` exited while its thread-pool job still held the store, leaving a 6 MB `-wal`.
enum OpenedLedgers {
    private static let list = Mutex<[Ledger]>([])

    static func add(_ ledger: Ledger) { list.withLock { $0.append(ledger) } }

    static func closeAll() async {
        let opened = list.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for ledger in opened { await ledger.close() }
    }
}

/// Runs a command body: a failure becomes one line on stderr and its exit code (``reportFailure(_:db:)``, the one
/// place a ``LedgerError`` code becomes an exit code). Anything else that is not ArgumentParser's own (usage,
/// exit codes) is a storage failure: exit 4, the file named. The ledgers the body opened are closed after it.
func runReporting(db: String? = nil, _ body: () async throws -> Void) async throws {
    let outcome: Result<Void, any Error>
    do {
        try await body()
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    await OpenedLedgers.closeAll()
    do {
        try outcome.get()
    } catch let exit as ExitCode {
        throw exit
    } catch let exit as CleanExit {
        throw exit
    } catch let error as ValidationError {
        throw error
    } catch {
        throw reportFailure(error, db: db)
    }
}

/// Prints `error` as one `activity-ledger:` line and returns the exit code (README: 1 not found, 2 bad input,
/// 3 conflict, 4 storage).
func reportFailure(_ error: any Error, db: String?) -> ExitCode {
    let failure = error as? LedgerError ?? Ledger.storageError(error, path: db ?? "the ledger")
    var message = optionNamed(failure).description
    let code: Int32
    switch failure.code {
    case .notFound: code = Exit.notFound
    case .badInput, .forbidden: code = Exit.badInput
    case .conflict: code = Exit.conflict
    default: code = Exit.storage
    }
    // A PostgreSQL URL is named without its password.
    let shown = db.map { db -> String in
        guard case .postgres(let url) = LedgerLocation(db) else { return db }
        return (try? PostgresURL(url).redacted) ?? "the PostgreSQL URL"
    }
    // A message that names its option (`--to …`) is about that ledger, not `db`'s.
    if code == Exit.storage, let shown, !message.contains(shown), !message.hasPrefix("--") {
        message = "\(shown): \(message)"
    }
    printFailure(message)
    return ExitCode(code)
}

/// The CLI option of each input the ledger names by its API name (an HTTP query parameter or request field).
private let optionOfField = ["cursor": "after", "tokenPrefix": "token-prefix", "run": "run-id", "app": "app"]

/// `failure` naming the CLI's option where its message starts with the ledger's name for that input
/// (`cursor: …` is `--after: …` here); a refused line of a file keeps its field names.
private func optionNamed(_ failure: LedgerError) -> LedgerError {
    guard failure.line == nil, let field = failure.field, let option = optionOfField[field],
        failure.message.hasPrefix(field + ":")
    else { return failure }
    var named = failure
    named.message = "--\(option)" + failure.message.dropFirst(field.count)
    return named
}

/// Prints `activity-ledger: <message>` on stderr as one line: the message often echoes input (an event type, an id,
/// a path), so its control characters are escaped (``escapingControls(_:)``) rather than printed.
func printFailure(_ message: String) {
    FileHandle.standardError.write(Data("activity-ledger: \(escapingControls(message))\n".utf8))
}

/// `text` with C0 controls, DEL, C1 controls and the Unicode line and paragraph separators written as escapes
/// (`\n`, `\r`, `\t`, else `\u001B`), so it prints on one line and shows what was sent.
func escapingControls(_ text: String) -> String {
    func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var escaped = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        guard isControl(scalar) else {
            escaped.append(scalar)
            continue
        }
        let written: String
        switch scalar {
        case "\n": written = "\\n"
        case "\r": written = "\\r"
        case "\t": written = "\\t"
        default:
            let hex = String(scalar.value, radix: 16, uppercase: true)
            written = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        escaped.append(contentsOf: written.unicodeScalars)
    }
    return String(escaped)
}

extension GlobalOptions {
    /// Opens the ledger for a command, in its file or its PostgreSQL database. Query commands refuse a missing file
    /// rather than creating an empty one, and open it read-only: they never write, migrate or catch up (a ledger
    /// that needs it is refused with the command that upgrades it). A one-shot command leaves a PostgreSQL pool to
    /// close with the process.
    func openLedger(mustExist: Bool = true, readOnly: Bool = false) async throws -> Ledger {
        if case .sqlite(let path) = location, mustExist && !FileManager.default.fileExists(atPath: path) {
            throw LedgerError(.notFound, "no ledger at \(path) (use --db PATH)", field: "db")
        }
        if case .sqlite(let path) = location { try StoreAccess.checkFile(path, option: "db", readOnly: readOnly) }
        try checkURL()
        var configuration: LedgerConfiguration = readOnly ? .readOnly : .init()
        configuration.store.busyTimeout = try busyTimeout(environment: ProcessInfo.processInfo.environment)
        let ledger = try await Ledger.open(location, configuration: configuration, logger: StoreAccess.quietLogger)
        OpenedLedgers.add(ledger)
        return ledger
    }

    /// The API keys of the ledger `db` names (a foreign file or database is refused). `keys create` makes the
    /// ledger when there is none (the first step of a new deployment); `list` and `revoke` need one (they made an
    /// empty ledger file at a mistyped path, and the whole schema in an empty PostgreSQL database). Failures are
    /// reported by the command's `runReporting`, like every other command's.
    func openKeys(mustExist: Bool) async throws -> APIKeyStore {
        if mustExist, case .postgres = location {
            // Opened read-only first, which refuses a database without a ledger ("not a ledger") and migrates
            // nothing; the file's check is `openLedger`'s own.
            _ = try await openLedger(mustExist: true, readOnly: true)
        }
        return try await APIKeyStore(ledger: openLedger(mustExist: mustExist))
    }

    /// Opens the event store of a ledger file alone, read-only (stats, backup: features of the file).
    func openStore(for feature: String, why: String) throws -> EventStore {
        guard case .sqlite(let path) = location else { throw Ledger.fileOnly(feature, why: why) }
        return try StoreAccess.openReadOnly(path, busyTimeout: busyTimeout(environment: ProcessInfo.processInfo.environment))
    }

    /// A `--db` URL that does not parse is bad input naming the option.
    func checkURL() throws {
        guard case .postgres(let url) = location else { return }
        do {
            _ = try PostgresURL(url)
        } catch let error as StoreError {
            throw LedgerError(.badInput, "--db: \(error.message)", field: "db")
        }
    }

    /// The log `db` names, read-only (a reading command never writes, on either backend), for `body`; a
    /// PostgreSQL pool is closed afterwards.
    func withLog<T>(_ body: (any EventLog) async throws -> T) async throws -> T {
        try await StoreAccess.withLog(location, readOnly: true, busyTimeout: busyTimeout(
            environment: ProcessInfo.processInfo.environment), body)
    }

    /// `--busy-timeout`, else `LEDGER_BUSY_TIMEOUT`, else 5 s.
    func busyTimeout(environment: [String: String]) throws -> Duration {
        var seconds = busyTimeoutSeconds
        if seconds == nil, let text = environment["LEDGER_BUSY_TIMEOUT"] {
            guard let value = Double(text) else {
                throw ValidationError("LEDGER_BUSY_TIMEOUT must be a number of seconds, got '\(text)'")
            }
            seconds = value
        }
        let value = seconds ?? 5
        guard value.isFinite, (0...3600).contains(value) else {
            // Named by where it came from (a probe's `LEDGER_BUSY_TIMEOUT=nan` was reported as --busy-timeout).
            let source = busyTimeoutSeconds == nil ? "LEDGER_BUSY_TIMEOUT" : "--busy-timeout"
            throw ValidationError("\(source) must be 0…3600 seconds, got \(value)")
        }
        return .milliseconds(Int64((value * 1000).rounded()))
    }
}

/// Parses a time option: RFC 3339 or Unix seconds.
func parseTime(_ text: String, option: String) throws -> Instant {
    guard let instant = Instant(parsing: text) else {
        throw LedgerError(
            .badInput, "--\(option): expected an RFC 3339 time or Unix seconds (years 0000–9999), got \"\(text)\"",
            field: option)
    }
    return instant
}

func printJSON(_ value: JSONValue) {
    FileHandle.standardOutput.write(Data((jsonText(value) + "\n").utf8))
}

/// `value` as compact JSON, by ActivityModel's writer.
func jsonText(_ value: JSONValue) -> String {
    var writer = JSONWriter()
    writer.write(value)
    return String(decoding: writer.bytes, as: UTF8.self)
}

