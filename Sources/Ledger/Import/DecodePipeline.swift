import ActivityModel
import Foundation
import LedgerStore
import Synchronization

/// The first half of an import, on its own thread: reads JSON Lines, decodes and validates each line with the
/// domain types, encodes its storage payload and compresses it, in batches. The writer (the import transaction) takes the
/// batches in order and only appends, so on two cores the decoding overlaps the SQLite work.
///
/// The batches go through a `BoundedPipeline` of `depth`, so memory stays bounded whatever the input size. A
/// refused line ends the stream with its error after the batches before it, which keeps the writer's order of
/// errors: an earlier line's store refusal still wins over a later line's decoding refusal.
///
/// `@unchecked Sendable`: the reader is touched by the producer thread only, until `finish()` has joined it (or
/// for good after `abandon()`); everything else is immutable.
final class DecodePipeline: @unchecked Sendable {
    /// One decoded batch, in input order.
    struct Batch {
        /// The events to store, each with its input to the inline projection attached here rather than on the
        /// writer.
        var stored: [NewEvent] = []
        var lines: [Int] = []
        /// Where the reader was after the batch.
        var progress = ImportProgress(lines: 0, bytes: 0)
    }

    enum Item {
        case batch(Batch)
        case failed(LedgerError)
        case end(ImportProgress)
    }

    private let reader: JSONLinesReader
    /// Compresses each payload beside the decoding (a file's store); nil keeps them as sent (PostgreSQL).
    private let precompressor: PayloadPrecompressor?
    private let batchSize: Int
    private let maxEventBytes: Int
    /// The namespace the events are written in (`Namespaced`).
    private let app: String
    private let depth: Int
    private var pipeline: BoundedPipeline<Item>?
    /// Batches the writer is done with (`recycle`), freed here on the producer's thread as it starts each new batch.
    /// Memory is cheaper to free on the thread that allocated it (glibc's per-thread arenas): the writer freeing
    /// each batch's events and projection inputs spent ~30 % of its time on it, and the writer is the import's
    /// slower half (BENCHMARKS.md, session 37). At most the pipeline's depth and one more wait here.
    private let spent = Mutex<[Batch]>([])

    init(
        reader: JSONLinesReader, precompressor: PayloadPrecompressor?, batchSize: Int, maxEventBytes: Int,
        app: String = "", depth: Int = 3
    ) {
        self.app = app
        self.reader = reader
        self.precompressor = precompressor
        self.batchSize = max(1, batchSize)
        self.maxEventBytes = maxEventBytes
        self.depth = max(1, depth)
    }

    /// Starts the producer thread.
    func start() {
        pipeline = BoundedPipeline(name: "ledger-import-decode", capacity: depth) { [self] pipeline in
            do {
                try produce(into: pipeline)
            } catch let error as LedgerError {
                throw error
            } catch {
                throw LedgerError(.badInput, "\(error)", line: reader.lineNumber)
            }
        }
    }

    /// Hands a batch the writer has appended back to the producer, which frees it.
    func recycle(_ batch: consuming Batch) {
        var last = Optional(batch)  // moved in: the list holds the only reference
        spent.withLock { $0.append(last.take()!) }
    }

    /// The next item, waiting for the producer if needed.
    func next() -> Item {
        do {
            // The producer sends `.end` last and is only cancelled by `finish` or `abandon`, after the last call.
            return try pipeline?.next() ?? .failed(LedgerError(.storage, "the import's decoding thread stopped early"))
        } catch {
            return .failed(error as? LedgerError ?? LedgerError(.badInput, "\(error)"))
        }
    }

    /// Stops the producer (if it is still going) and waits until its thread is done with the reader.
    func finish() {
        pipeline?.stop()
    }

    /// Tells the producer to stop without waiting for it: after a refusal the import must answer at once, even
    /// when the producer is blocked reading an input that is still open (`import -` on a terminal or an idle
    /// pipe). The thread keeps the pipeline and its reader alive until its read returns, then delivers nothing
    /// and ends; the caller must not touch the reader again.
    func abandon() {
        pipeline?.cancel()
    }

    private func produce(into pipeline: BoundedPipeline<Item>) throws {
        var batch = Batch()
        while let line = try reader.next() {
            // Taken out under the lock, freed outside it (when `freed` goes out of scope).
            if batch.stored.isEmpty {
                let freed = spent.withLock { list in
                    defer { list = [] }
                    return list
                }
                _ = consume freed
            }
            guard line.contains(where: { !Ledger.isWhitespace($0) }) else { continue }
            let event = try decode(line, lineNumber: reader.lineNumber)
            // Just decoded from its line: the decoder's rules are the read-back's (`Ledger.newEvent`).
            var stored = try Ledger.newEvent(event, app: app, line: reader.lineNumber, readBack: false)
            ActivityProjector.attach(ActivityProjector.Handed(event, hashingStates: false), app: app, to: &stored)
            if let size = Ledger.exportedSizeOver(maxEventBytes, event, stored: stored) {
                throw Ledger.oversize(size, limit: maxEventBytes, line: reader.lineNumber)
            }
            if let precompressor { stored.precompressed = precompressor.compress(stored.payload) }
            batch.stored.append(stored)
            batch.lines.append(reader.lineNumber)
            if batch.stored.count >= batchSize {
                batch.progress = ImportProgress(lines: reader.lineNumber, bytes: reader.bytesRead)
                guard pipeline.send(.batch(batch)) else { return }
                batch = Batch()
            }
        }
        if !batch.stored.isEmpty {
            batch.progress = ImportProgress(lines: reader.lineNumber, bytes: reader.bytesRead)
            guard pipeline.send(.batch(batch)) else { return }
        }
        pipeline.send(.end(ImportProgress(lines: reader.lineNumber, bytes: reader.bytesRead)))
    }

    private func decode(_ line: ArraySlice<UInt8>, lineNumber: Int) throws -> LedgerEvent {
        guard line.count <= maxEventBytes else {
            throw LedgerError(
                .badInput, "the event is \(line.count) bytes, over the limit of \(maxEventBytes)", line: lineNumber)
        }
        do {
            return Ledger.withID(try EventCodec.decode(line))
        } catch {
            throw LedgerError(.badInput, error.description, line: lineNumber, field: error.field)
        }
    }
}
