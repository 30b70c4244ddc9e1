import ActivityModel
import ArgumentParser
import Foundation
import Ledger
import Logging

/// Exit codes scripts can rely on. Documented in the README.
enum Exit {
    static let notFound: Int32 = 1
    static let badInput: Int32 = 2
    static let conflict: Int32 = 3
    static let storage: Int32 = 4
}

/// Runs a command body: a LedgerError becomes one line on stderr and its exit code.
func runReporting(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let failure as CommandFailure {
        throw CommandFailure.exit(failure)
    } catch let error as LedgerError {
        FileHandle.standardError.write(Data("activity-ledger: \(error)\n".utf8))
        switch error.code {
        case .notFound: throw ExitCode(Exit.notFound)
        case .badInput, .forbidden: throw ExitCode(Exit.badInput)
        case .conflict: throw ExitCode(Exit.conflict)
        default: throw ExitCode(Exit.storage)
        }
    }
}

extension GlobalOptions {
    /// Opens the ledger for a command. Query commands refuse a missing file rather than creating an empty one.
    func openLedger(mustExist: Bool = true, readOnly: Bool = false) throws -> Ledger {
        if mustExist && !FileManager.default.fileExists(atPath: db) {
            throw LedgerError(.notFound, "no ledger at \(db) (use --db PATH)", field: "db")
        }
        let configuration: LedgerConfiguration = readOnly ? .readOnly : .init()
        return try Ledger(path: db, configuration: configuration, logger: StoreAccess.quietLogger)
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
    var writer = JSONWriter()
    writer.write(value)
    FileHandle.standardOutput.write(Data(writer.bytes + [UInt8(ascii: "\n")]))
}

