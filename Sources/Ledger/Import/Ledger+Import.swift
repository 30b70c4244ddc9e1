import ActivityModel
import Foundation
import GRDB
import LedgerPostgres
import LedgerStore
import NIOPosix

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
    ///
    /// With `sealing`, an import into a ledger file with no rows seals as it goes: whole segments, no rows, rows
    /// only after the last whole segment (`EventStore.importTransaction`). Without, every event is a row until
    /// `seal` or `serve` seals it. PostgreSQL stores rows either way.
    public func importJSONLines(
        _ reader: JSONLinesReader, app: String? = nil, batchSize: Int = 2048, sealing: Bool = true,
        progress: ((ImportProgress) -> Void)? = nil
    ) async throws -> ImportSummary {
        let app = try Self.namespace(app)
        reader.maxLineBytes = maxEventBytes
        var precompressor: PayloadPrecompressor?
        if let file, await !file.importWouldSeal(sealing: sealing) { precompressor = file.makePrecompressor() }
        let pipeline = DecodePipeline(
            reader: reader, precompressor: precompressor, batchSize: batchSize,
            maxEventBytes: maxEventBytes, app: app)
        pipeline.start()
        if let postgres {
            return try await importJSONLines(pipeline, into: postgres, app: app, progress: progress)
        }
        do {
            let summary = try await store.importTransaction(sealing: sealing) { session in
                var importer = BatchImporter(ledger: self, session: session, app: app)
                while true {
                    switch pipeline.next() {
                    case .batch(let batch):
                        try importer.append(batch)
                        progress?(batch.progress)
                        importer.recycle(batch, to: pipeline)
                    case .failed(let error):
                        throw error
                    case .end(let end):
                        progress?(end)
                        return ImportSummary(
                            lines: end.lines, appended: importer.appended, duplicates: importer.duplicates,
                            lastPosition: session.lastPosition
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

    /// The import on PostgreSQL: the same pipeline, the batches appended in one transaction holding the head's
    /// lock (`PostgresEventLog.importTransaction`), each with its projection rows.
    private func importJSONLines(
        _ pipeline: DecodePipeline, into postgres: PostgresLedger, app: String, progress: ((ImportProgress) -> Void)?
    ) async throws -> ImportSummary {
        let projector = projector
        let logger = logger
        // The pipeline's hand-off blocks: wait for it on a thread of our own, never a cooperative one.
        // Called on the transaction's task only, one call at a time.
        nonisolated(unsafe) let progress = progress
        do {
            let summary = try await postgres.log.importTransaction { session in
                var appended = 0
                var duplicates = 0
                while true {
                    switch try await Self.readThreads.runIfActive({ pipeline.next() }) {
                    case .batch(let batch):
                        guard !batch.stored.isEmpty else { continue }
                        let result: AppendResult
                        do {
                            let appended = AppendBatch(events: batch.stored)
                            result = try await session.append(appended) { connection, rows, inputs in
                                try await PostgresLedger.projectionWrite(
                                    rows, inputs: inputs, projector: projector, connection: connection, logger: logger)
                            }
                        } catch let error as StoreError {
                            var translated = Self.translate(error) as? LedgerError ?? LedgerError(.storage, error.description)
                            var storedBefore = false
                            if let id = error.eventID { storedBefore = try await session.contains(id: id) }
                            translated.line = BatchImporter.line(of: error, in: batch, storedBefore: storedBefore)
                            throw translated
                        }
                        let written = result.duplicate.filter { !$0 }.count
                        appended += written
                        duplicates += result.duplicate.count - written
                        progress?(batch.progress)
                        pipeline.recycle(consume batch)
                    case .failed(let error):
                        throw error
                    case .end(let end):
                        progress?(end)
                        return ImportSummary(lines: end.lines, appended: appended, duplicates: duplicates, lastPosition: 0)
                    }
                }
            }
            pipeline.finish()
            var done = summary
            done.lastPosition = try await postgres.log.lastPosition()
            return done
        } catch {
            pipeline.abandon()
            if let error = error as? LedgerError { throw error }
            throw Self.storageError(Self.translate(error), path: path)
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Appends decoded batches and remembers which line each event came from, so that a store refusal (an id
/// re-sent with other content) is reported against its line.
struct BatchImporter {
    let ledger: Ledger
    let session: ImportSession
    let app: String
    private(set) var appended = 0
    private(set) var duplicates = 0
    /// Appended batches whose events the session may still hold for its next segment, oldest first, each with the
    /// number of events it appended.
    private var holding: [(batch: DecodePipeline.Batch, appended: Int)] = []
    private var lastAppended = 0

    init(ledger: Ledger, session: ImportSession, app: String) {
        self.ledger = ledger
        self.session = session
        self.app = app
    }

    /// Appends `batch`, whose events carry their projection inputs (the caller then hands it back to the pipeline
    /// to be freed: `DecodePipeline.recycle`).
    mutating func append(_ batch: DecodePipeline.Batch) throws {
        guard !batch.stored.isEmpty else { return }
        let result: AppendResult
        do {
            result = try session.append(AppendBatch(events: batch.stored))
        } catch let error as StoreError {
            var translated = Ledger.translate(error) as? LedgerError ?? LedgerError(.storage, error.description)
            translated.line = line(of: error, in: batch)
            throw translated
        }
        let written = result.duplicate.filter { !$0 }.count
        appended += written
        duplicates += result.duplicate.count - written
        lastAppended = written
    }

    /// Hands `batch` (just appended) back to the pipeline to be freed on its thread, and with it every earlier one
    /// whose events the session no longer holds: an import that seals as it goes holds the events of its next
    /// segment, which share their ids and payloads with their batch, and the last release of those should be the
    /// decoding thread's, which allocated them (`DecodePipeline.recycle`). Held events are the last ones appended.
    mutating func recycle(_ batch: DecodePipeline.Batch, to pipeline: DecodePipeline) {
        let held = session.heldEvents
        guard held > 0 || !holding.isEmpty else { return pipeline.recycle(batch) }
        holding.append((batch, lastAppended))
        var later = holding.reduce(0) { $0 + $1.appended }
        while let oldest = holding.first, later - oldest.appended >= held {
            later -= oldest.appended
            pipeline.recycle(holding.removeFirst().batch)
        }
    }

    /// The line of the event the store refused. An id re-sent with other content is refused at its first
    /// occurrence in the batch when the log held it before the batch (a row at or before the session's last
    /// position, which the refused batch did not move), and otherwise at the first later occurrence that differs
    /// from that first one, which the batch had just written.
    private func line(of error: StoreError, in batch: DecodePipeline.Batch) -> Int? {
        // The refused batch is still in the transaction (no savepoint): "stored before" is a row before its start.
        let storedBefore =
            error.eventID.map { id in
                let stored = (try? session.event(id: id)) ?? nil
                return stored.map { $0.position <= session.lastPosition } ?? false
            } ?? false
        return Self.line(of: error, in: batch, storedBefore: storedBefore)
    }

    /// The same, given whether the refused id was stored before the batch (one home for both backends).
    static func line(of error: StoreError, in batch: DecodePipeline.Batch, storedBefore: Bool) -> Int? {
        guard let id = error.eventID else { return batch.lines.first }
        let occurrences = batch.stored.indices.filter { batch.stored[$0].id == id }
        guard let first = occurrences.first else { return batch.lines.first }
        if storedBefore { return batch.lines[first] }
        let reference = batch.stored[first]
        let refused = occurrences.dropFirst().first { index in
            let event = batch.stored[index]
            return event.stream != reference.stream || event.type != reference.type || event.at != reference.at
                || event.payload != reference.payload
        }
        return batch.lines[refused ?? first]
    }
}
