import ActivityModel
import Foundation
import GRDB
import LedgerStore

/// What an import did.
public struct ImportSummary: Sendable, Hashable, Codable {
    /// Lines read (blank lines included).
    public var lines: Int
    /// Events written.
    public var appended: Int
    /// Events whose id was already in the ledger with the same content.
    public var duplicates: Int
    /// The ledger's last position afterwards.
    public var lastPosition: Int64
}

/// Progress of a long import, reported every batch.
public struct ImportProgress: Sendable {
    public var lines: Int
    public var bytes: Int64
}

extension Ledger {
    /// Appends every event of a JSON Lines input, in order, in ONE transaction: a refused line stops the import
    /// with its line number and reason, and nothing of the input is written.
    ///
    /// Memory stays bounded: lines are decoded and appended `batchSize` at a time inside the transaction.
    public func importJSONLines(
        _ reader: JSONLinesReader, app: String? = nil, batchSize: Int = 2048,
        progress: ((ImportProgress) -> Void)? = nil
    ) async throws -> ImportSummary {
        do {
            return try await store.importTransaction { session in
                var importer = BatchImporter(ledger: self, session: session, app: app)
                while let line = try reader.next() {
                    guard line.contains(where: { !Self.isWhitespace($0) }) else { continue }
                    try importer.add(line, lineNumber: reader.lineNumber)
                    if importer.count >= batchSize {
                        try importer.flush()
                        progress?(ImportProgress(lines: reader.lineNumber, bytes: reader.bytesRead))
                    }
                }
                try importer.flush()
                progress?(ImportProgress(lines: reader.lineNumber, bytes: reader.bytesRead))
                return ImportSummary(
                    lines: reader.lineNumber, appended: importer.appended, duplicates: importer.duplicates,
                    lastPosition: try store.lastPosition(in: session.db)
                )
            }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw Self.translate(error)
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Collects decoded lines into store batches and remembers which line each event came from, so that a store
/// refusal (an id re-sent with other content) is reported against its line.
private struct BatchImporter {
    let ledger: Ledger
    let session: ImportSession
    let app: String?
    private var events: [LedgerEvent] = []
    private var lines: [Int] = []
    private(set) var appended = 0
    private(set) var duplicates = 0

    init(ledger: Ledger, session: ImportSession, app: String?) {
        self.ledger = ledger
        self.session = session
        self.app = app
    }

    var count: Int { events.count }

    mutating func add(_ line: ArraySlice<UInt8>, lineNumber: Int) throws {
        guard line.count <= ledger.maxEventBytes else {
            throw LedgerError(
                .badInput, "the event is \(line.count) bytes, over the limit of \(ledger.maxEventBytes)",
                line: lineNumber
            )
        }
        let event: LedgerEvent
        do {
            event = try EventCodec.decode(line)
        } catch {
            throw LedgerError(.badInput, error.description, line: lineNumber, field: error.field)
        }
        events.append(Ledger.withID(event))
        lines.append(lineNumber)
    }

    mutating func flush() throws {
        guard !events.isEmpty else { return }
        if let app {
            do { try ledger.checkOwnership(in: session.db, of: events, app: app) } catch var error as LedgerError {
                error.line = lines.first
                throw error
            }
        }
        ledger.projector.handOver(events, app: app)
        defer { ledger.projector.withdraw(events) }
        let result: AppendResult
        do {
            result = try session.append(AppendBatch(events: events.map(Ledger.newEvent)))
        } catch let error as StoreError {
            var translated = Ledger.translate(error) as? LedgerError ?? LedgerError(.storage, error.description)
            translated.line = line(named: error.message)
            throw translated
        }
        let written = result.duplicate.filter { !$0 }.count
        appended += written
        duplicates += result.duplicate.count - written
        events.removeAll(keepingCapacity: true)
        lines.removeAll(keepingCapacity: true)
    }

    /// The line of the event whose id the store's message names.
    private func line(named message: String) -> Int? {
        for (event, line) in zip(events, lines) where message.contains(event.id!) { return line }
        return lines.first
    }
}
