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
    /// Lines are decoded on a second thread (`DecodePipeline`) while the transaction appends the batches
    /// before them. Memory stays bounded: a few batches of `batchSize` lines are in flight at a time.
    /// A refusal returns at once, without reading the rest of the input (which may be a terminal still open);
    /// the reader must not be used again after that.
    public func importJSONLines(
        _ reader: JSONLinesReader, app: String? = nil, batchSize: Int = 2048,
        progress: ((ImportProgress) -> Void)? = nil
    ) async throws -> ImportSummary {
        let app = try Self.namespace(app)
        let pipeline = DecodePipeline(
            reader: reader, precompressor: store.makePrecompressor(), batchSize: batchSize,
            maxEventBytes: maxEventBytes, app: app)
        pipeline.start()
        do {
            let summary = try await store.importTransaction { session in
                var importer = BatchImporter(ledger: self, session: session, app: app)
                while true {
                    switch pipeline.next() {
                    case .batch(let batch):
                        try importer.append(batch)
                        progress?(batch.progress)
                    case .failed(let error):
                        throw error
                    case .end(let end):
                        progress?(end)
                        return ImportSummary(
                            lines: end.lines, appended: importer.appended, duplicates: importer.duplicates,
                            lastPosition: try store.lastPosition(in: session.db)
                        )
                    }
                }
            }
            pipeline.finish()  // the producer reached the end of the input: joining is immediate
            return summary
        } catch let error as LedgerError {
            pipeline.abandon()
            throw error
        } catch {
            pipeline.abandon()
            throw Self.translate(error)
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Appends decoded batches and remembers which line each event came from, so that a store refusal (an id
/// re-sent with other content) is reported against its line.
private struct BatchImporter {
    let ledger: Ledger
    let session: ImportSession
    let app: String
    private(set) var appended = 0
    private(set) var duplicates = 0

    init(ledger: Ledger, session: ImportSession, app: String) {
        self.ledger = ledger
        self.session = session
        self.app = app
    }

    mutating func append(_ batch: DecodePipeline.Batch) throws {
        guard !batch.events.isEmpty else { return }
        var stored = batch.stored
        ledger.projector.attach(batch.handed, app: app, to: &stored)
        let result: AppendResult
        do {
            result = try session.append(AppendBatch(events: stored))
        } catch let error as StoreError {
            var translated = Ledger.translate(error) as? LedgerError ?? LedgerError(.storage, error.description)
            translated.line = line(of: error, in: batch)
            throw translated
        }
        let written = result.duplicate.filter { !$0 }.count
        appended += written
        duplicates += result.duplicate.count - written
    }

    /// The line of the event the store refused. An id re-sent with other content is refused at its first
    /// occurrence in the batch when the log held it before the batch (the failed batch's savepoint left nothing
    /// behind, so the log now is the log before it), and otherwise at the first later occurrence that differs
    /// from that first one, which the batch had just written.
    private func line(of error: StoreError, in batch: DecodePipeline.Batch) -> Int? {
        guard let id = error.eventID else { return batch.lines.first }
        let occurrences = batch.stored.indices.filter { batch.stored[$0].id == id }
        guard let first = occurrences.first else { return batch.lines.first }
        if (try? ledger.store.event(in: session.db, id: id)) != nil { return batch.lines[first] }
        let reference = batch.stored[first]
        let refused = occurrences.dropFirst().first { index in
            let event = batch.stored[index]
            return event.stream != reference.stream || event.type != reference.type || event.at != reference.at
                || event.payload != reference.payload
        }
        return batch.lines[refused ?? first]
    }
}
