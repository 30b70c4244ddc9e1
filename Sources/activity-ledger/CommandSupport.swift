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
    func openLedger(mustExist: Bool = true) throws -> Ledger {
        if mustExist && !FileManager.default.fileExists(atPath: db) {
            throw LedgerError(.notFound, "no ledger at \(db) (use --db PATH)", field: "db")
        }
        return try Ledger(path: db, logger: Logger(label: "activity-ledger"))
    }
}

/// Parses a time option: RFC 3339 or Unix seconds.
func parseTime(_ text: String, option: String) throws -> Instant {
    if let seconds = Double(text), seconds.isFinite {
        return Instant(milliseconds: Int64((seconds * 1000).rounded()))
    }
    guard let instant = Instant(rfc3339: text) else {
        throw LedgerError(.badInput, "--\(option): expected an RFC 3339 time or Unix seconds, got \"\(text)\"", field: option)
    }
    return instant
}

func printJSON(_ value: JSONValue) {
    var writer = JSONWriter()
    writer.write(value)
    writer.bytes.append(UInt8(ascii: "\n"))
    FileHandle.standardOutput.write(Data(writer.bytes))
}

/// A one-line progress report on stderr, rewritten in place, only when stderr is a terminal or forced.
final class StderrProgress {
    private let label: String
    private var lastPrint = 0.0
    private let enabled: Bool

    init(_ label: String, enabled: Bool = isatty(2) != 0) {
        self.label = label
        self.enabled = enabled
    }

    func report(_ done: Int64, of total: Int64? = nil, unit: String = "events") {
        guard enabled else { return }
        let now = Date().timeIntervalSince1970
        guard now - lastPrint >= 0.2 else { return }
        lastPrint = now
        let line: String
        if let total, total > 0 {
            let percent = Int(Double(done) / Double(total) * 100)
            let width = 30
            let filled = min(width, Int(Double(done) / Double(total) * Double(width)))
            line = "\(label) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(percent)% \(done)/\(total) \(unit)"
        } else {
            line = "\(label) \(done) \(unit)"
        }
        FileHandle.standardError.write(Data("\r\(line)\u{1B}[K".utf8))
    }

    func finish() {
        guard enabled, lastPrint > 0 else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
